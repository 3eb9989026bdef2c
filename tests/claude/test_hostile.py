"""A stand-in CLI that writes hostile frames: every run still ends with one Done and the good lines are kept.

The stand-in is the replay executable over a scripted stdout (adaptor_nb.testing._replay), so the real driver code
reads real pipes from a real process.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from adaptor_nb import Agent, AgentFailed, Done, Notice, TextDelta
from adaptor_nb.drivers import claude

from .helpers import of

pytestmark = pytest.mark.claude

SID = "hostile-session"


def _frame(**fields: Any) -> bytes:
    return json.dumps({**fields, "session_id": SID}).encode()


def _event(ev: dict[str, Any]) -> bytes:
    return _frame(type="stream_event", event=ev, parent_tool_use_id=None, uuid="u")


INIT = _frame(type="system", subtype="init", model="m", cwd="/", tools=[])
START = _event({"type": "message_start", "message": {"id": "msg_1", "model": "m"}})
BLOCK = _event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
STOP = _event({"type": "content_block_stop", "index": 0})


def _delta(text: Any, index: Any = 0) -> bytes:
    return _event({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}})


def _result(text: str) -> bytes:
    return _frame(type="result", subtype="success", is_error=False, result=text, usage={}, total_cost_usd=0)


async def _run(tmp_path: Path, lines: list[bytes], **options: Any) -> tuple[list[Any], Done]:
    script = tmp_path / "stdout.jsonl"
    script.write_bytes(b"\n".join(lines) + b"\n")
    cmd = [sys.executable, "-m", "adaptor_nb.testing._replay", str(script)]
    cfg = claude.Config(command=cmd, grace_period=1.0, startup_timeout=20.0)
    events: list[Any] = []
    async with Agent(claude.Driver(cfg), workspace=str(tmp_path), **options) as agent:
        stream = agent.send("go")

        async def collect() -> None:
            async for ev in stream.events():
                events.append(ev)

        # A bound on the whole test, so a regression fails instead of hanging the suite.
        await asyncio.wait_for(collect(), 60)
    dones = of(events, Done)
    assert len(dones) == 1
    return events, dones[0]


def _text(events: list[Any]) -> str:
    return "".join(e.text for e in of(events, TextDelta))


async def test_a_numeric_text_delta_still_ends_the_run_with_its_text(tmp_path: Path) -> None:
    _events, done = await _run(tmp_path, [INIT, START, BLOCK, _delta("ab"), _delta(42), STOP, _result("ab42")])
    assert done.err is None and done.result is not None
    assert done.result.text == "ab42"


async def test_a_numeric_text_delta_without_a_result_fails_with_the_partial_text(tmp_path: Path) -> None:
    _events, done = await _run(tmp_path, [INIT, START, BLOCK, _delta("partial "), _delta(7.5)])
    assert isinstance(done.err, AgentFailed)
    assert done.err.result is not None and done.err.result.text.startswith("partial ")


@pytest.mark.parametrize("index", [[0], {"a": 1}, "0", None, True])
async def test_a_wrong_typed_block_index_is_skipped_and_the_text_kept(tmp_path: Path, index: Any) -> None:
    lines = [INIT, START, BLOCK, _delta("kept "), _delta("lost", index), _delta("text"), STOP, _result("kept text")]
    events, done = await _run(tmp_path, lines)
    assert done.err is None and done.result is not None and done.result.text == "kept text"
    assert _text(events) == "kept text"


@pytest.mark.parametrize(
    "frame",
    [
        _frame(type="assistant", message={"id": "x", "content": "a string, not blocks"}),
        _frame(type="assistant", message={"id": "x", "content": [{"type": "tool_use", "id": [1], "input": 3}]}),
        _frame(type="user", message={"content": [{"type": "tool_result", "tool_use_id": {}, "content": 5}]}),
        _frame(type="system", subtype=["init"], session_id=3),
        _frame(type="system", subtype="task_started", tool_use_id=[1], task_id={"a": 1}),
        _event({"type": "content_block_start", "index": [0], "content_block": "text"}),
        _event({"type": "content_block_stop", "index": {"a": 1}}),
        _frame(type="control_request", request_id=[1], request="not a dict"),
        _frame(type=["stream_event"]),
    ],
)
async def test_a_wrong_typed_frame_never_crashes_the_driver(tmp_path: Path, frame: bytes) -> None:
    lines = [INIT, START, BLOCK, _delta("before "), frame, _delta("after"), STOP, _result("before after")]
    events, done = await _run(tmp_path, lines)
    assert done.err is None, done.err
    assert done.result is not None and done.result.text == "before after"
    assert "before after" in _text(events)


async def test_json_nested_too_deep_is_a_skipped_line_and_the_lines_around_it_are_kept(tmp_path: Path) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    deep_obj = b'{"a":' * 5_000 + b"1" + b"}" * 5_000
    lines = [INIT, START, BLOCK, _delta("one "), deep, deep_obj, _delta("two"), STOP, _result("one two")]
    events, done = await _run(tmp_path, lines)
    assert done.err is None and done.result is not None and done.result.text == "one two"
    errors = [n for n in of(events, Notice) if n.metadata.get("code") == "claude.protocol_error"]
    assert len(errors) == 2
