"""Every recorded Cursor stream-json fixture through the driver: events, transcript, result and checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _support import drain, of

from adaptor_nb import (
    Agent,
    AgentFailed,
    Notice,
    Phase,
    SubagentKind,
    SubagentUpdate,
    TextDelta,
    Thinking,
    ToolCall,
    ToolResult,
)

from .conftest import FIXTURES


def texts(events: list) -> str:
    return "".join(e.text for e in of(events, TextDelta))


async def run(driver, prompt: str = "go"):
    async with Agent(driver) as agent:
        return await drain(agent.send(prompt))


async def test_happy_assistant_chunks_concatenate_to_the_result(make_driver) -> None:
    events, result, err = await run(make_driver("happy-assistant.jsonl", partial_output=False))
    assert err is None and result is not None
    assert result.text == "Cursor says hi." == texts(events)
    assert result.provider == "cursor" and result.model == "GPT-5"
    assert result.usage is None  # Cursor reports no token counts: unobserved, not zero
    assert result.metadata["request_id"] == "request-happy" and result.metadata["duration_ms"] == "1234"
    init = [n for n in of(events, Notice) if n.metadata.get("code") == "cursor.init"]
    assert init and init[0].metadata["session_id"] == "cursor-happy"
    ends = [e for e in of(events, TextDelta) if e.phase is Phase.END]
    assert len(ends) == 2  # two whole messages, two blocks
    assert [i.text for i in result.transcript() if i.kind == "text"] == ["Cursor ", "says hi."]


async def test_two_messages_concatenate(make_driver) -> None:
    _events, result, err = await run(make_driver("two-messages.jsonl", partial_output=False))
    assert err is None and result is not None and result.text == "One, two."


async def test_partial_deltas_make_one_block_and_skip_the_repeated_message(make_driver) -> None:
    events, result, err = await run(make_driver("partial-deltas.jsonl"))
    assert err is None and result is not None
    assert texts(events) == "Hello there." == result.text
    assert [e.phase for e in of(events, TextDelta)].count(Phase.START) == 1
    assert "".join(t.text for t in of(events, Thinking)) == "The user wants a greeting."
    assert [i.text for i in result.transcript() if i.kind == "thinking"] == ["The user wants a greeting."]


async def test_unknown_events_are_notices_and_not_fatal(make_driver) -> None:
    events, result, err = await run(make_driver("unknown-events.jsonl"))
    assert err is None and result is not None and result.text == "Still here."
    unknown = [n.metadata["type"] for n in of(events, Notice) if n.metadata.get("code") == "cursor.unknown_event"]
    assert unknown == ["connection", "telemetry.flush"]


async def test_shell_read_and_a_rejected_edit(make_driver) -> None:
    events, result, err = await run(make_driver("shell-read-edit.jsonl"))
    assert err is None and result is not None
    calls = [c for c in of(events, ToolCall) if c.phase is Phase.END]
    assert [(c.id, c.name) for c in calls] == [("call_sh|fc_sh", "shell"), ("call_rd", "read"), ("call_ed", "edit")]
    assert calls[0].args == {"command": "ls", "workingDirectory": ""}
    results = of(events, ToolResult)
    assert [(r.id, r.is_error) for r in results] == [("call_sh|fc_sh", False), ("call_rd", False), ("call_ed", True)]
    assert results[0].result["stdout"] == "README.md\n"
    items = [(i.kind, i.tool_use_id) for i in result.transcript() if i.kind in ("tool_use", "tool_result")]
    assert items[:2] == [("tool_use", "call_sh|fc_sh"), ("tool_result", "call_sh|fc_sh")]
    assert result.text == "Looking around. The edit needs --force."


async def test_live_recording_mcp_and_task_calls(make_driver) -> None:
    events, result, err = await run(make_driver("live-20260723-capabilities.jsonl"))
    assert err is None and result is not None
    assert result.text == "T17_PLUGIN_VISIBLE PLANNER_CONFIRMED"
    mcp = next(c for c in of(events, ToolCall) if c.phase is Phase.END and c.name.startswith("mcp__"))
    assert mcp.id == "call_MCP|fc_MCP" and "\n" not in mcp.id
    assert mcp.name == "mcp__agent-adaptor-tools__alignment_probe"
    assert mcp.args == {"server": "agent-adaptor-tools", "tool": "alignment_probe", "arguments": {}}
    mcp_result = next(r for r in of(events, ToolResult) if r.id == "call_MCP|fc_MCP")
    assert not mcp_result.is_error
    assert next(i.text for i in result.transcript() if i.tool_use_id == mcp.id and i.kind == "tool_result") == (
        '{"token":"T17_PLUGIN_VISIBLE"}'
    )
    subs = [s for s in of(events, SubagentUpdate) if s.task == "call_TASK|fc_TASK"]
    assert [s.kind for s in subs] == [SubagentKind.STARTED, SubagentKind.MESSAGE, SubagentKind.FINISHED]
    assert subs[0].member == "alignment-planner" and subs[1].summary == "PLANNER_CONFIRMED"
    assert subs[2].state == "completed"


async def test_task_tool_call_with_thinking_old_envelope(make_driver) -> None:
    events, result, err = await run(make_driver("task-tool-call.jsonl"))
    assert err is None and result is not None
    assert result.text == "Subagent probe completed."  # the terminal's result wins
    assert texts(events) == "The subagent has summarized the README successfully."
    subs = [s for s in of(events, SubagentUpdate) if s.task == "call-abc123"]
    assert [s.kind for s in subs] == [SubagentKind.STARTED, SubagentKind.MESSAGE, SubagentKind.FINISHED]
    assert subs[-1].data["durationMs"] == "5857"
    assert "Waiting for the subagent" in "".join(t.text for t in of(events, Thinking))


async def test_task_agent_id_mismatch_is_kept(make_driver) -> None:
    events, result, err = await run(make_driver("task-tool-call-agentid-diff.jsonl"))
    assert err is None and result is not None
    finished = next(s for s in of(events, SubagentUpdate) if s.kind is SubagentKind.FINISHED)
    assert finished.data["agentId"] == "exec-bbb-different"
    assert finished.data["requested_agent_id"] == "req-handle-aaa"
    assert [s.summary for s in of(events, SubagentUpdate) if s.kind is SubagentKind.MESSAGE] == [
        "Test coverage is at 82% for the main package.",
        "All critical paths are covered.",
    ]


@pytest.mark.parametrize(
    ("name", "text"), [("with-tool.jsonl", "Done searching."), ("with-thinking.jsonl", "Answer ready.")]
)
async def test_old_shape_fixtures(make_driver, name: str, text: str) -> None:
    events, result, err = await run(make_driver(name))
    assert err is None and result is not None and result.text == text
    if name == "with-tool.jsonl":
        assert [(r.id, r.result) for r in of(events, ToolResult)] == [("call-1", {"text": "3 matches"})]
    else:
        assert "".join(t.text for t in of(events, Thinking)) == "Cursor is reasoning."


async def test_failure_without_a_terminal_keeps_partial_text(make_driver) -> None:
    _events, result, err = await run(make_driver("failure.jsonl"))
    assert isinstance(err, AgentFailed) and result is None
    assert err.result is not None and err.result.text == "Partial reply before process failure"
    assert err.details["exit_code"] == 1
    assert "ended without a result line" in err.details["stderr_tail"]


async def test_error_terminal_fails_the_run(make_driver) -> None:
    _events, _result, err = await run(make_driver("error-result.jsonl"))
    assert isinstance(err, AgentFailed)
    assert "usage limit reached" in err.message and err.details["subtype"] == "error"
    assert err.result is not None and err.result.text == "Trying."


def test_every_fixture_is_exercised() -> None:
    names = {p.name for p in FIXTURES.glob("*.jsonl")}
    source = "".join(p.read_text() for p in Path(__file__).parent.glob("test_*.py"))
    assert all(n in source for n in names), sorted(n for n in names if n not in source)
    for p in FIXTURES.glob("*.jsonl"):
        for line in p.read_text().splitlines():
            assert isinstance(json.loads(line), dict)
