"""A stdout line over ``Config.max_line_bytes`` ends the run with a RunError naming the bound, on every driver.

The stand-in writes a few good lines, then ``x`` without a newline for ever: the run must fail (not hang, not
grow memory), keep the text that came before, say which setting to raise, and leave no process behind.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from adaptor_nb import Agent, AgentFailed, InvalidDriverConfigError
from adaptor_nb.drivers import claude

from .harness import DRIVERS, make_driver, prompt_for, run_turn

BOUND = 1 << 20


def _claude_like() -> list[str]:
    def ev(event: dict[str, object]) -> str:
        return json.dumps({"type": "stream_event", "event": event, "session_id": "s", "parent_tool_use_id": None})

    return [
        json.dumps({"type": "system", "subtype": "init", "session_id": "s", "model": "m", "tools": []}),
        ev({"type": "message_start", "message": {"id": "msg_1", "model": "m"}}),
        ev({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ev({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "partial text"}}),
    ]


def _codex() -> list[str]:
    params = {"threadId": "thr_1", "turnId": "@TURN@", "itemId": "m1", "delta": "partial text"}
    return [json.dumps({"method": "item/agentMessage/delta", "params": params})]


def _cursor() -> list[str]:
    return [
        json.dumps({"type": "system", "subtype": "init", "session_id": "s", "model": "m"}),
        json.dumps(
            {
                "type": "assistant",
                "message": {"role": "assistant", "content": [{"type": "text", "text": "partial text"}]},
                "session_id": "s",
            }
        ),
    ]


GOOD = {"claude": _claude_like, "codebuddy": _claude_like, "codex": _codex, "cursor": _cursor}


@pytest.mark.parametrize("name", DRIVERS)
async def test_a_line_over_the_bound_fails_the_run_naming_the_setting(tmp_path: Path, name: str) -> None:
    driver = make_driver(name, tmp_path, max_line_bytes=BOUND)
    async with Agent(driver, workspace=str(tmp_path)) as agent:
        outcome = await run_turn(agent, prompt_for(GOOD[name](), flood=True), timeout=60)
    err = outcome.error
    assert isinstance(err, AgentFailed), (outcome.kind, err)
    assert "max_line_bytes" in err.message and "1 MiB" in err.message
    assert err.result is not None
    assert "partial text" in err.result.text
    assert err.details.get("max_line_bytes", BOUND) == BOUND


@pytest.mark.parametrize("value", [0, 1000, -5, 2.5, "64M", None])
def test_a_bad_bound_is_refused_before_any_process_starts(value: object) -> None:
    with pytest.raises(InvalidDriverConfigError) as info:
        claude.Driver(claude.Config(command=["/bin/true"], max_line_bytes=value)).validate_config()  # type: ignore[arg-type]
    assert info.value.option == "max_line_bytes"


async def test_a_line_over_the_bound_during_codex_start_up_names_the_setting(tmp_path: Path) -> None:
    # The stand-in floods as soon as it starts: the initialize answer never comes.
    script = tmp_path / "flood.py"
    script.write_text("import sys\nb = b'x' * 65536\nwhile True:\n    sys.stdout.buffer.write(b)\n")
    driver = make_driver("codex", tmp_path, max_line_bytes=BOUND, command=[sys.executable, "-S", str(script)])
    async with Agent(driver, workspace=str(tmp_path)) as agent:
        outcome = await run_turn(agent, "go", timeout=60)
    err = outcome.error
    assert isinstance(err, AgentFailed), (outcome.kind, err)
    assert "during start-up" in err.message and "max_line_bytes" in err.message
