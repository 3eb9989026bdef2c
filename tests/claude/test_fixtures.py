"""The driver over recorded stream-json (the replay CLI), so parsing is pinned without a model or the real CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from adaptor_nb import (
    Agent,
    AgentFailed,
    ApprovalKind,
    ApprovalPolicy,
    ApprovalRequest,
    Notice,
    Phase,
    Policy,
    QuestionMode,
    SubagentKind,
    SubagentUpdate,
    TextDelta,
    Thinking,
    ToolCall,
    ToolResult,
)
from adaptor_nb.drivers import claude

from .conftest import FIXTURES
from .helpers import drain, of


def replay_agent(name: str, tmp_path: Path, **options) -> Agent:
    cmd = [sys.executable, "-m", "adaptor_nb.testing._replay", str(FIXTURES / name)]
    cfg = claude.Config(command=cmd, grace_period=1.0, startup_timeout=20.0)
    return Agent(claude.Driver(cfg), workspace=str(tmp_path), **options)


async def run_fixture(name: str, tmp_path: Path, **options):
    async with replay_agent(name, tmp_path, **options) as agent:
        return await drain(agent.send("replayed prompt"))


async def test_thinking_then_text(tmp_path: Path) -> None:
    events, result, err = await run_fixture("streaming-thinking.jsonl", tmp_path)
    assert err is None and result is not None and result.text == "Done."
    thinking = of(events, Thinking)
    assert [t.phase for t in thinking] == [Phase.START, Phase.CONTENT, Phase.CONTENT, Phase.END]
    assert "".join(t.text for t in thinking) == "Let me think."
    assert "".join(t.text for t in of(events, TextDelta)) == "Done."  # the whole message is not repeated
    assert result.usage is not None and result.usage.input_tokens == 20


async def test_streamed_tool_arguments_and_result(tmp_path: Path) -> None:
    events, result, err = await run_fixture("streaming-tool-use.jsonl", tmp_path)
    assert err is None and result is not None
    calls = of(events, ToolCall)
    end = [c for c in calls if c.phase is Phase.END]
    assert len(end) == 1 and end[0].args
    deltas = "".join(c.args_delta for c in calls if c.phase is Phase.CONTENT)
    assert json.loads(deltas) == end[0].args
    [res] = of(events, ToolResult)
    assert res.id == end[0].id and res.name == end[0].name


async def test_mcp_tool_names_pass_through(tmp_path: Path) -> None:
    events, _, err = await run_fixture("streaming-mcp-tool-use.jsonl", tmp_path)
    assert err is None
    assert [c.name for c in of(events, ToolCall) if c.phase is Phase.END] == ["mcp__docs__search"]


async def test_whole_messages_without_streaming(tmp_path: Path) -> None:
    events, result, err = await run_fixture("happy-assistant.jsonl", tmp_path)
    assert err is None and result is not None and result.text == "Hello from Claude."
    text = of(events, TextDelta)
    assert [t.phase for t in text] == [Phase.START, Phase.CONTENT, Phase.END]
    assert result.usage is not None and result.usage.cached_input_tokens == 1 and result.usage.input_tokens == 8
    assert result.usage.estimated_cost_milli == 1


@pytest.mark.parametrize("name", ["subagent-task-progress.jsonl", "recorded-subagent.jsonl"])
async def test_subagent_progress(name: str, tmp_path: Path) -> None:
    events, result, err = await run_fixture(name, tmp_path)
    assert err is None and result is not None
    updates = of(events, SubagentUpdate)
    kinds = [u.kind for u in updates]
    assert kinds[0] is SubagentKind.STARTED and kinds[-1] is SubagentKind.FINISHED
    assert SubagentKind.STATE in kinds
    assert len({u.task for u in updates}) == 1
    assert updates[-1].state == "completed"


async def test_failed_subagent(tmp_path: Path) -> None:
    events, result, err = await run_fixture("subagent-failed.jsonl", tmp_path)
    assert err is None and result is not None and result.text == "Task failed."
    finished = [u for u in of(events, SubagentUpdate) if u.kind is SubagentKind.FINISHED]
    assert len(finished) == 1 and finished[0].state == "failed" and finished[0].summary == "Permission denied."


async def test_plan_review_request_from_a_recording(tmp_path: Path) -> None:
    seen: list[ApprovalRequest] = []

    def approve(req: ApprovalRequest) -> None:
        seen.append(req)
        req.approve()

    _events, _result, err = await run_fixture("streaming-interactive-plan.jsonl", tmp_path, on_approval=approve)
    assert [r.kind for r in seen] == [ApprovalKind.PLAN_REVIEW]
    assert seen[0].details["plan"] == "1. Audit AGENTS.md\n2. Migrate checklist"
    assert seen[0].tool_call_id == "toolu_plan_interactive"
    assert isinstance(err, AgentFailed)  # the recording stops right after the request


async def test_question_request_with_string_options(tmp_path: Path) -> None:
    seen: list[ApprovalRequest] = []

    def answer(req: ApprovalRequest) -> None:
        seen.append(req)
        req.answer("src")

    policy = Policy(approvals=ApprovalPolicy(question=QuestionMode.ASK))
    await run_fixture("streaming-interactive-question.jsonl", tmp_path, on_approval=answer, policy=policy)
    assert seen and seen[0].kind is ApprovalKind.QUESTION and seen[0].title == "Pick a directory"
    assert [c.key for c in seen[0].choices] == ["docs", "src"]


async def test_a_truncated_stream_fails_with_the_partial_text(tmp_path: Path) -> None:
    _events, _result, err = await run_fixture("streaming-truncated-agui.jsonl", tmp_path)
    assert isinstance(err, AgentFailed) and err.details["exit_code"] == 1
    assert err.result is not None and err.result.text == "h"


async def test_an_error_frame_becomes_a_notice(tmp_path: Path) -> None:
    events, _result, err = await run_fixture("streaming-error-agui.jsonl", tmp_path)
    assert [n.text for n in of(events, Notice) if n.metadata.get("code") == "claude.error"] == ["fixture stream error"]
    assert isinstance(err, AgentFailed)


async def test_error_during_execution(tmp_path: Path) -> None:
    _events, _result, err = await run_fixture("failure.jsonl", tmp_path)
    assert isinstance(err, AgentFailed) and "upstream error" in err.message
    assert err.details["subtype"] == "error_during_execution"


@pytest.mark.parametrize(
    ("name", "text"),
    [("recorded-thinking-text.jsonl", "recorded answer"), ("recorded-bash-tool.jsonl", "listed")],
)
async def test_recordings_of_the_real_cli(name: str, text: str, tmp_path: Path) -> None:
    _events, result, err = await run_fixture(name, tmp_path)
    assert err is None and result is not None and result.text == text
    assert result.model == "claude-opus-4-8"
    assert [i.kind for i in result.transcript()][-1] == "result"


async def test_a_long_delta_stream_on_a_thread(tmp_path: Path) -> None:
    async with replay_agent("recorded-text-deltas.jsonl", tmp_path) as agent:
        events, result, err = await drain(agent.thread("t").send("go"))
    assert err is None and result is not None
    recorded = (FIXTURES / "recorded-text-deltas.jsonl").read_text().count('"text_delta"')
    assert len([t for t in of(events, TextDelta) if t.text]) == recorded > 100
    assert result.text == "".join(f"Hello from mock ({i})" for i in range(200))
