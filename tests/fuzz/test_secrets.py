"""Secrets never persist: a CLI that prints a secret, whole or cut at every possible place, leaks it nowhere we keep.

The stand-in CLI (standin.py, Claude Code's stream-json) writes one turn in which the secret is split at every
boundary across two thinking deltas, two text deltas, two tool input deltas and two stderr writes, and appears whole
in the tool's output, the assistant message and the final result. Every surface built from the run is then searched:
the events (each string, and each stream's pieces joined), the Result (text, raw streams, transcript), the SQLite
thread store's file, a session recording, a cassette, the batch cache, the widget state and the static output.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from adaptor_nb import Agent, Done, Event, TextDelta, Thinking, ToolCall
from adaptor_nb._views._model import RunState
from adaptor_nb._views._static import run_html
from adaptor_nb.batch import map_rows
from adaptor_nb.cassette import Cassette
from adaptor_nb.recorder import ExposurePolicy, SessionRecorder
from adaptor_nb.threadstore import SQLiteStore

from .harness import make_driver, prompt_for

SECRET = "sk-live-7Qx9Lm2Vb8Rt4Zp6Wc"
NAMED = "ghp_namedTokenValue12345"  # under a name that says TOKEN: secret without being marked so
TIMEOUT = 30.0
SID = "standin"


def _cuts(value: str) -> Iterator[tuple[str, str]]:
    for i in range(1, len(value)):
        yield value[:i], value[i:]


def _event(inner: dict[str, Any]) -> str:
    return json.dumps({"type": "stream_event", "event": inner, "session_id": SID, "parent_tool_use_id": None})


def _delta(index: int, kind: str, field: str, text: str) -> str:
    return _event({"type": "content_block_delta", "index": index, "delta": {"type": kind, field: text}})


def _turn() -> tuple[list[str], list[str]]:
    """The stdout lines and stderr writes of the hostile turn."""
    thinking, text, tool_json = [], [], []
    for a, b in [*_cuts(SECRET), *_cuts(NAMED)]:
        thinking += [_delta(0, "thinking_delta", "thinking", f" t {a}"), _delta(0, "thinking_delta", "thinking", b)]
        text += [_delta(1, "text_delta", "text", f" x {a}"), _delta(1, "text_delta", "text", b)]
        tool_json += [
            _delta(2, "input_json_delta", "partial_json", ('{"command": "echo ' if not tool_json else "") + a),
            _delta(2, "input_json_delta", "partial_json", b + " "),
        ]
    tool_json.append(_delta(2, "input_json_delta", "partial_json", '"}'))
    full_text = "".join(f" x {a}{b}" for a, b in [*_cuts(SECRET), *_cuts(NAMED)])
    tool_input = {"command": "echo " + "".join(f"{a}{b} " for a, b in [*_cuts(SECRET), *_cuts(NAMED)])}
    msg = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [], "usage": {}}
    lines = [
        _event({"type": "message_start", "message": msg}),
        _event({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        *thinking,
        _event({"type": "content_block_stop", "index": 0}),
        _event({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        *text,
        _event({"type": "content_block_stop", "index": 1}),
        _event(
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}},
            }
        ),
        *tool_json,
        json.dumps(
            {
                "type": "assistant",
                "message": {
                    **msg,
                    "content": [
                        {"type": "text", "text": full_text},
                        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": tool_input},
                    ],
                },
                "session_id": SID,
                "parent_tool_use_id": None,
            }
        ),
        _event({"type": "content_block_stop", "index": 2}),
        _event({"type": "message_stop"}),
        json.dumps(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": f"{SECRET}\n{NAMED}"},
                    ],
                },
                "session_id": SID,
                "parent_tool_use_id": None,
            }
        ),
        json.dumps(
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "num_turns": 1,
                "result": full_text + f" env: KEY={SECRET}",
                "session_id": SID,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
        ),
    ]
    stderr = [piece for a, b in [*_cuts(SECRET), *_cuts(NAMED)] for piece in (f"warn {a}", f"{b}\n")]
    return lines, stderr


PROMPT = prompt_for(_turn()[0], stderr=_turn()[1])


def _driver(home: Path) -> Any:
    return make_driver(
        "claude", home, startup_timeout=TIMEOUT, secret_env={"MY_SERVICE": SECRET}, env={"GITHUB_TOKEN": NAMED}
    )


def _leaks(where: str, text: str | bytes) -> list[str]:
    data = text if isinstance(text, str) else text.decode("utf-8", "replace")
    return [f"{where}: {name}" for name, value in (("secret", SECRET), ("named", NAMED)) if value in data]


def _file_leaks(folder: Path, pattern: str) -> list[str]:
    return [leak for path in folder.glob(pattern) for leak in _leaks(path.name, path.read_bytes())]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, bytes):
        yield value.decode("utf-8", "replace")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)
    elif hasattr(value, "__dict__"):
        yield from _strings(vars(value))


def _shapes(value: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _shapes(v, (*path, str(k)))
    elif isinstance(value, list):
        for v in value:
            yield from _shapes(v, (*path, "#"))


def _frame_leaks(where: str, lines: list[str]) -> list[str]:
    """Leaks in JSON lines, the values of one field across frames joined (a text streamed as deltas)."""
    joined: dict[tuple[str, ...], str] = {}
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        for shape, text in _shapes(obj):
            joined[shape] = joined.get(shape, "") + text
    return [leak for shape, text in joined.items() for leak in _leaks(f"{where} {'.'.join(shape)}", text)]


def _event_leaks(events: list[Event]) -> list[str]:
    leaks = [leak for e in events for s in _strings(e) for leak in _leaks(type(e).__name__, s)]
    streams = {
        "text deltas": "".join(e.text for e in events if isinstance(e, TextDelta)),
        "thinking": "".join(e.text for e in events if isinstance(e, Thinking)),
        "tool input deltas": "".join(e.args_delta for e in events if isinstance(e, ToolCall)),
        "stderr events": "".join(str(getattr(e, "text", "")) for e in events if type(e).__name__ == "ProcessInfo"),
    }
    return leaks + [leak for name, joined in streams.items() for leak in _leaks(name, joined)]


async def test_a_secret_split_at_every_boundary_reaches_no_surface(tmp_path: Path) -> None:
    store_path = tmp_path / "threads.sqlite"
    tape = tmp_path / "cassette.jsonl"
    leaks: list[str] = []
    recorder = SessionRecorder(tmp_path / "session.jsonl", exposure=ExposurePolicy(include_raw_streams=True))
    with Cassette(tape, mode="rewrite"):
        async with Agent(_driver(tmp_path), workspace=str(tmp_path), thread_store=SQLiteStore(store_path)) as agent:
            thread = agent.thread("review")
            stream = thread.send(PROMPT, timeout=TIMEOUT)
            events = [event async for event in stream.events()]
    for event in events:
        recorder.record(event)
    done = events[-1]
    assert isinstance(done, Done) and done.err is None, done.err
    result = done.result
    assert result is not None
    assert result.text.startswith(" x <redacted> x <redacted>")  # the text around the secret is kept
    assert sum(1 for e in events if isinstance(e, TextDelta)) > 0

    leaks += _event_leaks(events)
    leaks += _leaks("Result.text", result.text)
    raw = result.raw()
    leaks += _leaks("Result.raw stdout", raw.stdout) + _leaks("Result.raw stderr", raw.stderr)
    leaks += _frame_leaks("Result.raw stdout", raw.stdout.decode("utf-8", "replace").splitlines())
    leaks += [leak for s in _strings(result.transcript) for leak in _leaks("Result.transcript", s)]
    leaks += _file_leaks(tmp_path, "threads.sqlite*")
    with sqlite3.connect(store_path) as db:
        for (table,) in db.execute("select name from sqlite_master where type = 'table'"):
            for row in db.execute(f'select * from "{table}"'):
                leaks += [leak for s in _strings(list(row)) for leak in _leaks(f"store table {table}", s)]
    leaks += _leaks("session recording", (tmp_path / "session.jsonl").read_bytes())
    leaks += _leaks("cassette", tape.read_bytes())
    frames = [f for r in Cassette(tape, mode="none").recordings for p in r.processes for f in p]
    leaks += _frame_leaks("cassette stdout", [str(f["b"]) for f in frames if f["k"] == "out"])
    leaks += _leaks("cassette stderr", "".join(str(f["b"]) for f in frames if f["k"] == "err"))

    state = RunState(driver="claude")
    for event in events:
        state.apply(event)
    snapshot = state.snapshot()
    leaks += [leak for s in _strings(snapshot) for leak in _leaks("widget state", s)]
    live = {i: state.live_text(i) for i in snapshot.get("live", {})}
    page = run_html(state.header, state.items, live, state.messages, state.footer)
    leaks += _leaks("static output", page)
    assert leaks == []


async def test_the_batch_cache_keeps_no_secret(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    frame = pd.DataFrame({"body": [PROMPT]})
    out = await map_rows(Agent(_driver(tmp_path)), frame, "{body}", cache=cache, progress=False, timeout=TIMEOUT)
    assert list(out["_status"]) == ["ok"], out.to_dict()
    leaks = [leak for s in _strings(out.to_dict()) for leak in _leaks("frame", s)]
    leaks += _file_leaks(tmp_path, "cache.sqlite*")
    assert leaks == []


def test_a_value_the_driver_calls_public_is_kept(tmp_path: Path) -> None:
    from adaptor_nb._core._redact import run_secrets
    from adaptor_nb.drivers import claude

    config = claude.Config(env={"GITHUB_TOKEN": NAMED, "MY_KEY_PUBLIC": "a-public-value"}, public_env=["MY_KEY_PUBLIC"])
    found = run_secrets(config, environ={"HOME_TOKEN": "short", "OPENAI_API_KEY": "sk-environ-1234"})
    assert found == {NAMED, "sk-environ-1234"}
