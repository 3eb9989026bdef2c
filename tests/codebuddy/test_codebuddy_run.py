"""Plain runs on the real CodeBuddy Code CLI: streamed text and thinking, usage, the final text of a reasoning
turn, warm turns on one process, tool calls with approvals, and the API key kept out of everything."""

from __future__ import annotations

from pathlib import Path

import pytest
from _support import drain, of

from adaptor_nb import (
    Agent,
    ApprovalMode,
    ApprovalPolicy,
    Policy,
    ProcessInfo,
    ProcessKind,
    TextDelta,
    Thinking,
    ToolCall,
    ToolResult,
    TurnEnd,
)
from adaptor_nb.testing import ChatReply, FakeChatCompletionsServer

from .conftest import API_KEY, DriverFactory

pytestmark = pytest.mark.codebuddy


def spawned(events: list[object]) -> list[int]:
    return [int(e.data["pid"]) for e in of(events, ProcessInfo) if e.kind is ProcessKind.SPAWN]  # type: ignore[arg-type]


async def test_text_streams_and_the_result_carries_text_and_usage(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.enqueue(ChatReply.text("hello from the fake model", usage=(30, 7)))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        events, result, error = await drain(agent.send("say hello"))
    assert error is None and result is not None
    assert result.text == "hello from the fake model"
    assert "".join(e.text for e in of(events, TextDelta)) == "hello from the fake model"
    assert result.usage is not None and (result.usage.input_tokens, result.usage.output_tokens) == (30, 7)
    assert [e.turn for e in of(events, TurnEnd)] == [1]
    (request,) = fake.model_requests
    assert request.prompt == "say hello" and request.has_auth


async def test_a_reasoning_turn_gets_its_final_text_from_the_result_line(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.enqueue(ChatReply.text("the answer", reasoning="let me think"))
    async with Agent(make_driver(partial_messages=False), workspace=str(workspace)) as agent:
        events, result, error = await drain(agent.send("think first"))
    assert error is None and result is not None
    assert result.text == "the answer"
    assert "".join(e.text for e in of(events, Thinking)) == "let me think"


async def test_thread_turns_reuse_one_process_and_keep_history(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        thread = agent.thread("t1")
        first = await drain(thread.send("[[say one]]"))
        second = await drain(thread.send("[[say two]]"))
        third = await drain(thread.send("[[say three]]"))
    assert [r.text for _, r, _ in (first, second, third) if r is not None] == ["one", "two", "three"]
    assert len(set(spawned(first[0]))) == 1 and spawned(second[0]) == [] and spawned(third[0]) == []
    assert [r.prompt for r in fake.model_requests] == ["[[say one]]", "[[say two]]", "[[say three]]"]
    assert fake.model_requests[2].user_queries() == ["[[say one]]", "[[say two]]", "[[say three]]"]


async def test_an_approved_bash_call_runs_and_its_result_is_reported(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.enqueue(ChatReply.tool("Bash", {"command": "touch made.txt && echo made", "description": "touch"}))
    async with Agent(
        make_driver(),
        workspace=str(workspace),
        policy=Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_APPROVE)),
    ) as agent:
        events, result, error = await drain(agent.send("make a file"))
    assert error is None and result is not None
    assert (workspace / "made.txt").exists()
    calls = of(events, ToolCall)
    assert calls and {c.name for c in calls} == {"Bash"} and len({c.id for c in calls}) == 1
    assert any("made" in str(r.result) and not r.is_error for r in of(events, ToolResult))
    assert result.text is not None and result.text.startswith("Done. Last tool output:")


async def test_a_denied_bash_call_does_not_run(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.enqueue(ChatReply.tool("Bash", {"command": "touch nope.txt", "description": "touch"}))
    async with Agent(
        make_driver(),
        workspace=str(workspace),
        policy=Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_DENY)),
    ) as agent:
        _, result, error = await drain(agent.send("make a file"))
    assert error is None and result is not None
    assert not (workspace / "nope.txt").exists()
    assert fake.model_requests[-1].messages[-1]["role"] == "tool"


async def test_the_api_key_never_reaches_events_raw_output_transcript_or_reprs(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    driver = make_driver()
    async with Agent(driver, workspace=str(workspace)) as agent:
        events, result, error = await drain(agent.send("[[say hi]]"))
    assert error is None and result is not None
    raw = result.raw()
    # the CLI echoes the key in its initialize reply (account.token; its tail in uid): captured, redacted
    assert b'"token":"<redacted>"' in raw.stdout and b"anonymous_<redacted>" in raw.stdout
    assert raw.terminal is not None and raw.terminal.json["result"] == "hi"
    everything = repr(events) + repr(result) + repr(result.transcript()) + repr(driver) + repr(driver.config)
    assert API_KEY not in everything
    assert API_KEY.encode() not in raw.stdout + raw.stderr and API_KEY[-8:].encode() not in raw.stdout
    assert API_KEY not in repr(fake.requests) and fake.model_requests[0].headers["x-user-id"] == "<redacted>"
