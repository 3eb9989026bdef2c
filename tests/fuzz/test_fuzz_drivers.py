"""Property: whatever a CLI writes, every run ends with exactly one Done within its timeout, never a crash.

Each driver runs on the stand-in CLI (real process, real pipes, the driver's real reader and translator), one
Agent for many inputs, so the process is reused between turns the way a notebook uses it. Inputs are recorded turns
with fields set to wrong types, removed, frames dropped, repeated, swapped, truncated or mixed with garbage lines
(tests/fuzz/frames.py). ``FUZZ_EXAMPLES`` sets the inputs per driver (default 50; the 10,000-input campaign is
tests/fuzz/campaign.py).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from adaptor_nb import Agent, AgentFailed

from .frames import SEEDS, turn_scripts
from .harness import DRIVERS, make_driver, prompt_for, run_turn

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "50"))
RUN_TIMEOUT = 10.0


def test_every_driver_has_seeds() -> None:
    assert all(len(SEEDS[name]) >= 2 for name in DRIVERS), {name: len(SEEDS[name]) for name in DRIVERS}


@pytest.mark.parametrize("name", DRIVERS)
def test_every_run_ends_with_exactly_one_done_within_its_timeout(tmp_path: Path, name: str) -> None:
    loop = asyncio.new_event_loop()

    async def open_agent() -> Agent:
        return Agent(make_driver(name, tmp_path), workspace=str(tmp_path))

    agent = loop.run_until_complete(open_agent())
    kinds: list[str] = []

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(script=turn_scripts(name))
    def check(script: dict[str, Any]) -> None:
        outcome = loop.run_until_complete(
            run_turn(agent, prompt_for(script["lines"], exit=script["exit"]), RUN_TIMEOUT)
        )
        kinds.append(outcome.kind)
        assert outcome.kind != "hang", "no Done within the run's timeout"
        assert not outcome.kind.startswith(("crash", "dones")), (outcome.kind, outcome.error)

    try:
        check()
    finally:
        loop.run_until_complete(agent.close())
        loop.close()
    assert len(kinds) >= EXAMPLES


def _stream_event(event: dict[str, Any]) -> str:
    return json.dumps({"type": "stream_event", "event": event, "session_id": "s", "parent_tool_use_id": None})


@pytest.mark.parametrize("name", ["claude", "codebuddy"])
@pytest.mark.parametrize(
    "delta",
    [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": {"type": {"type": []}}}},
        {"type": "content_block_delta", "index": [0], "delta": {"type": "text_delta", "text": "x"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": [1]}},
    ],
)
async def test_a_wrong_typed_delta_found_by_the_campaign_ends_the_run(
    tmp_path: Path, name: str, delta: dict[str, Any]
) -> None:
    lines = [
        json.dumps({"type": "system", "subtype": "init", "session_id": "s", "model": "m", "tools": []}),
        _stream_event({"type": "message_start", "message": {"id": "msg_1", "model": "m"}}),
        _stream_event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        _stream_event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "kept"}}),
        _stream_event(delta),
        json.dumps({"type": "result", "subtype": "success", "result": "kept", "session_id": "s", "usage": {}}),
    ]
    async with Agent(make_driver(name, tmp_path), workspace=str(tmp_path)) as agent:
        outcome = await run_turn(agent, prompt_for(lines), RUN_TIMEOUT)
        assert outcome.kind == "ok", (outcome.kind, outcome.error)
        assert outcome.done is not None and outcome.done.result is not None and outcome.done.result.text == "kept"
        # Without the result line the run fails, and its partial result is built from the text seen so far.
        outcome = await run_turn(agent, prompt_for(lines[:-1], exit=True), RUN_TIMEOUT)
    assert outcome.kind == "AgentFailed", (outcome.kind, outcome.error)
    err = outcome.error
    assert isinstance(err, AgentFailed) and err.result is not None and err.result.text.startswith("kept")


_DEEP = "[" * 990 + "]" * 990
_WRONG_SHAPES = {
    "cursor": [
        '{"type": ["assistant"], "text": "x"}',
        '{"type": {"type": "assistant"}}',
        '{"type": ' + _DEEP + "}",
        '{"type": "assistant", "message": {"content": ' + _DEEP + "}}",
        '{"type": "tool_call", "subtype": "completed", "call_id": "c", "tool_call": {"taskToolCall": {"args": {}, '
        '"result": {"success": {"conversationSteps": 5}}}}}',
    ],
    "codebuddy": [
        '{"type": "assistant", "message": {"id": "m", "content": 5}}',
        '{"type": "user", "message": {"content": 7}}',
        '{"type": "assistant", "message": {"id": "m", "content": [{"type": "text", "text": "a"}], '
        '"usage": {"input_tokens": NaN, "output_tokens": Infinity}}}',
        '{"type": ' + _DEEP + "}",
    ],
}


@pytest.mark.parametrize(("name", "line"), [(n, line) for n, lines in _WRONG_SHAPES.items() for line in lines])
async def test_a_frame_of_an_unexpected_shape_is_skipped_and_the_run_goes_on(
    tmp_path: Path, name: str, line: str
) -> None:
    seed = [json.dumps(f) for f in SEEDS[name][1]]  # a recorded turn that ends well
    async with Agent(make_driver(name, tmp_path), workspace=str(tmp_path)) as agent:
        outcome = await run_turn(agent, prompt_for([*seed[:-1], line, seed[-1]]), RUN_TIMEOUT)
    assert outcome.kind == "ok", (outcome.kind, outcome.error)
