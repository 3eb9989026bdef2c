"""Whatever bytes a CLI writes, recording them loses nothing and changes nothing.

Each driver runs on the stand-in CLI with a recorded turn whose texts end with a lone surrogate escape (``\\ud83d``,
what a JavaScript CLI writes when it cuts a string in the middle of an emoji) and an escaped NUL, with lines of raw
invalid UTF-8, a raw NUL and a raw invalid byte inside a JSON string put in between, and invalid UTF-8 on stderr.
A run under a recording cassette must end as it does without one; the cassette must replay every hostile line byte
for byte; a session recording of its events must load back equal; a cassette that cannot be written fails after
the run, saying where what it recorded went.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from adaptor_nb import Agent, Done
from adaptor_nb.cassette import Cassette, CassetteError
from adaptor_nb.recorder import ExposurePolicy, SessionRecorder, load, replay

from .frames import SEEDS
from .harness import DRIVERS, Outcome, make_driver, prompt_for, run_turn

RUN_TIMEOUT = 30.0
CUT = " cut \ud83d\x00"  # dumped with ensure_ascii: the escapes \ud83d and \u0000 in the JSON text
HOSTILE = [
    "\udcff\udcfe not UTF-8 at all \udc80",
    '{"type":"hostile","text":"a raw \udce9 byte in a string"}',
    '{"type":"hostile","text":"an escaped lone surrogate \\ud83d and NUL \\u0000"}',
    "a raw NUL \x00 in a line",
]
SEED = {"claude": 1, "codebuddy": 1, "codex": 0, "cursor": 1}  # recorded turns that end well
STDERR = ["warning: \udcff\udcfe invalid bytes on stderr\n"]


def load_cassette(path: Path) -> list[Any]:
    return Cassette(path, mode="none").recordings


def _cut_texts(value: Any) -> Any:
    """``value`` with every string under a text-like key ending in ``CUT``."""
    if isinstance(value, dict):
        return {
            k: v + CUT if k in ("text", "delta", "result") and isinstance(v, str) else _cut_texts(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_cut_texts(v) for v in value]
    return value


def _hostile_turn(name: str) -> list[str]:
    frames = [json.dumps(_cut_texts(f)) for f in SEEDS[name][SEED[name]]]
    return [*frames[:-1], *HOSTILE, frames[-1]]


def _bytes(line: str) -> bytes:
    try:
        return line.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return line.encode("utf-8", "surrogatepass")


def _seen(outcome: Outcome) -> tuple[str, str]:
    """What a run ended with: its outcome and its text."""
    result = outcome.done.result if outcome.done is not None else None
    return outcome.kind, result.text if result is not None else ""


async def _run(name: str, home: Path, prompt: str) -> tuple[Outcome, bytes]:
    async with Agent(make_driver(name, home, startup_timeout=RUN_TIMEOUT), workspace=str(home)) as agent:
        outcome = await run_turn(agent, prompt, RUN_TIMEOUT)
    done = outcome.done
    raw = done.result.raw().stdout if done is not None and done.result is not None else b""
    return outcome, raw


@pytest.mark.parametrize("name", DRIVERS)
async def test_a_recording_cassette_keeps_every_byte_and_changes_nothing(tmp_path: Path, name: str) -> None:
    prompt = prompt_for(_hostile_turn(name), stderr=STDERR)
    plain, _ = await _run(name, tmp_path, prompt)
    tape = tmp_path / "hostile.jsonl"
    with Cassette(tape, mode="rewrite") as rec:
        recorded, live_stdout = await _run(name, tmp_path, prompt)
    assert rec.recorded == 1
    assert _seen(recorded) == _seen(plain), (recorded.kind, recorded.error)
    assert _seen(plain)[0] == "ok", (plain.kind, plain.error)
    assert "\ud83d" in _seen(plain)[1], _seen(plain)

    tape.read_text(encoding="utf-8")  # the cassette is valid UTF-8 JSONL
    frames = [f for r in load_cassette(tape) for p in r.processes for f in p]
    out = b"\n".join(_bytes(str(f["b"])) for f in frames if f["k"] == "out")
    err = b"".join(_bytes(str(f["b"])) for f in frames if f["k"] == "err")
    for line in HOSTILE:
        assert _bytes(line) in out, line
    assert _bytes(STDERR[0]) in err

    with Cassette(tape, mode="none") as play:
        replayed, replay_stdout = await _run(name, tmp_path, prompt)
    assert play.replayed == 1
    assert _seen(replayed) == _seen(plain), (replayed.kind, replayed.error)
    for line in HOSTILE:
        if live_stdout:
            assert _bytes(line) in live_stdout, line
            assert _bytes(line) in replay_stdout, line


@pytest.mark.parametrize("name", DRIVERS)
async def test_a_session_recording_of_hostile_output_loads_back_equal(tmp_path: Path, name: str) -> None:
    prompt = prompt_for(_hostile_turn(name), stderr=STDERR)
    recorder = SessionRecorder(tmp_path / "session.jsonl", exposure=ExposurePolicy(include_raw_streams=True))
    async with Agent(make_driver(name, tmp_path, startup_timeout=RUN_TIMEOUT), workspace=str(tmp_path)) as agent:
        stream = agent.send(prompt, timeout=RUN_TIMEOUT)
        async for event in stream.events():
            recorder.record(event)
    (tmp_path / "session.jsonl").read_text(encoding="utf-8")
    assert [r.line() for r in load(tmp_path / "session.jsonl")] == [r.line() for r in recorder.records]
    again = list(replay(tmp_path / "session.jsonl"))
    assert len(again) == len(recorder.records)
    texts = [str(getattr(e, "text", "")) for e in again]
    assert any("\ud83d" in t for t in texts), texts
    done = recorder.records[-1]
    assert done.kind == "Done"
    stdout = done.diagnostics["raw_streams"]["stdout"]
    assert isinstance(stdout, dict) and "$b64" in stdout
    assert isinstance(again[-1], Done)


async def test_a_cassette_that_cannot_be_written_fails_after_the_run_and_keeps_the_recording(tmp_path: Path) -> None:
    prompt = prompt_for(_hostile_turn("claude"))
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cassette's folder should be")
    tape = blocker / "cassette.jsonl"
    rec = Cassette(tape, mode="rewrite").start()
    try:
        first, _ = await _run("claude", tmp_path, prompt)
        second, _ = await _run("claude", tmp_path, prompt)
    finally:
        with pytest.raises(CassetteError) as caught:
            rec.close()
    assert first.kind == second.kind == "ok", (first.kind, first.error, second.kind, second.error)
    _check_kept(caught.value, tape, runs=2)


def _check_kept(err: CassetteError, tape: Path, runs: int) -> None:
    kept = Path(err.details["saved_to"])
    assert str(tape) in str(err) and str(kept) in str(err)
    assert len(load_cassette(kept)) == runs and not tape.exists()
    os.unlink(kept)
