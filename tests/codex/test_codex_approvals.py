"""Approvals on the real Codex CLI: command and file-change requests answered with accept, decline and cancel."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from adaptor_nb import (
    Agent,
    ApprovalDenied,
    ApprovalKind,
    ApprovalMode,
    ApprovalPolicy,
    ApprovalRequest,
    FallbackAction,
    Notice,
    Phase,
    Policy,
    SandboxLevel,
    ToolCall,
    ToolResult,
)
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._openai import Reply

from .conftest import CATALOG_MODEL, DriverFactory, make_home
from .helpers import alive, of, run_all, spawned_pids

pytestmark = pytest.mark.codex

ESCALATE = Reply.exec_command(
    "touch made.txt && echo made", sandbox_permissions="require_escalated", justification="needs to write made.txt"
)
PATCH = Reply.apply_patch("*** Begin Patch\n*** Add File: patched.txt\n+patched\n*** End Patch\n")


def read_only(permission: ApprovalMode, on_reject: FallbackAction = FallbackAction.INHERIT) -> Policy:
    return Policy(sandbox=SandboxLevel.READ_ONLY, approvals=ApprovalPolicy(permission=permission, on_reject=on_reject))


class Recorder:
    """An approval handler that answers every request the same way and keeps what it saw."""

    def __init__(self, answer: str, *, interrupt: bool = False) -> None:
        self.answer = answer
        self.interrupt = interrupt
        self.seen: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> None:
        self.seen.append(request)
        if self.answer == "approve":
            request.approve()
        else:
            request.deny("not today", interrupt=self.interrupt)


async def test_an_escalated_command_asks_and_runs_when_approved(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(ESCALATE)
    handler = Recorder("approve")
    policy = read_only(ApprovalMode.ASK)
    async with Agent(make_driver(), workspace=str(workspace), policy=policy, on_approval=handler) as agent:
        events, result, error = await run_all(agent.send("make a file"))
    assert error is None and result is not None
    (request,) = handler.seen
    assert request.kind is ApprovalKind.PERMISSION
    assert request.title.startswith("Run command:") and "touch made.txt" in request.title
    assert request.details["reason"] == "needs to write made.txt"
    assert [c.key for c in request.choices] == ["accept", "acceptForSession", "acceptWithExecpolicyAmendment",
                                                "decline", "cancel"]  # fmt: skip
    (done,) = of(events, ToolResult)
    assert done.id == request.tool_call_id
    assert done.result["status"] == "completed"
    assert (workspace / "made.txt").exists()
    assert [n.data["outcome"] for n in of(events, Notice) if n.kind == "approval.resolved"] == ["approved"]


async def test_a_declined_command_is_reported_and_the_turn_goes_on(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(ESCALATE)
    policy = read_only(ApprovalMode.ASK, FallbackAction.CONTINUE)
    async with Agent(make_driver(), workspace=str(workspace), policy=policy, on_approval=Recorder("deny")) as agent:
        events, result, error = await run_all(agent.send("make a file"))
    assert error is None and result is not None
    (done,) = of(events, ToolResult)
    assert done.result["status"] == "declined"
    assert done.is_error
    assert not (workspace / "made.txt").exists()
    assert "rejected by user" in fake.model_requests[1].tool_outputs[-1]
    assert result.text.startswith("Done. Last tool output:")


async def test_deny_with_interrupt_cancels_the_turn_and_fails_the_run(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(ESCALATE)
    policy = read_only(ApprovalMode.ASK, FallbackAction.CONTINUE)
    handler = Recorder("deny", interrupt=True)
    async with Agent(make_driver(), workspace=str(workspace), policy=policy, on_approval=handler) as agent:
        _, _result, error = await run_all(agent.send("make a file"))
    assert isinstance(error, ApprovalDenied)
    assert "cancel" in error.message
    assert not (workspace / "made.txt").exists()
    assert len(fake.model_requests) == 1


async def test_a_denial_under_the_default_abort_policy_ends_the_run_and_its_process(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(ESCALATE)
    policy = read_only(ApprovalMode.ASK)
    async with Agent(make_driver(), workspace=str(workspace), policy=policy, on_approval=Recorder("deny")) as agent:
        events, _, error = await run_all(agent.send("make a file"))
        assert isinstance(error, ApprovalDenied)
        assert "not today" in str(error)
        assert not any(alive(pid) for pid in spawned_pids(events))
    assert not (workspace / "made.txt").exists()


async def test_auto_approve_answers_without_a_handler(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(ESCALATE)
    async with Agent(make_driver(), workspace=str(workspace), policy=read_only(ApprovalMode.AUTO_APPROVE)) as agent:
        events, _, error = await run_all(agent.send("make a file"))
    assert error is None
    assert (workspace / "made.txt").exists()
    resolved = [n.data for n in of(events, Notice) if n.kind == "approval.resolved"]
    assert [(d["outcome"], d["by"]) for d in resolved] == [("approved", "policy")]


async def test_auto_deny_declines_and_the_agent_carries_on(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(ESCALATE)
    async with Agent(make_driver(), workspace=str(workspace), policy=read_only(ApprovalMode.AUTO_DENY)) as agent:
        events, result, error = await run_all(agent.send("make a file"))
    assert error is None and result is not None
    assert not (workspace / "made.txt").exists()
    assert of(events, ToolResult)[0].result["status"] == "declined"


async def test_a_file_change_asks_and_is_applied_when_approved(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(PATCH)
    handler = Recorder("approve")
    policy = read_only(ApprovalMode.ASK)
    driver = make_driver(model=CATALOG_MODEL)
    async with Agent(driver, workspace=str(workspace), policy=policy, on_approval=handler) as agent:
        _, _, error = await run_all(agent.send("patch"))
    assert error is None
    (request,) = handler.seen
    assert request.title == f"Apply changes to {workspace / 'patched.txt'}"
    assert request.details["changes"][0]["kind"] == "add"
    assert [c.key for c in request.choices] == ["accept", "acceptForSession", "decline", "cancel"]
    assert (workspace / "patched.txt").read_text() == "patched\n"


async def test_a_declined_file_change_is_not_applied(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(PATCH)
    policy = read_only(ApprovalMode.ASK, FallbackAction.CONTINUE)
    driver = make_driver(model=CATALOG_MODEL)
    async with Agent(driver, workspace=str(workspace), policy=policy, on_approval=Recorder("deny")) as agent:
        events, _, error = await run_all(agent.send("patch"))
    assert error is None
    assert not (workspace / "patched.txt").exists()
    assert of(events, ToolResult)[0].result["status"] == "declined"
    assert "rejected" in fake.model_requests[1].tool_outputs[-1]


MCP_SERVER = str(Path(__file__).parent.parent / "fixtures" / "mcp_echo_server.py")


@pytest.fixture
def mcp_driver(make_driver: DriverFactory, fake: FakeOpenAIServer, tmp_path: Path) -> DriverFactory:
    """A driver whose CODEX_HOME declares the ``echo`` MCP server (the tiny stdio server in tests/fixtures)."""
    servers = {"mcp_servers": {"echo": {"command": sys.executable, "args": [MCP_SERVER]}}}
    home = make_home(tmp_path / "codex-home-mcp", fake, settings=servers)
    return lambda **fields: make_driver(codex_home=str(home), **fields)


async def test_an_mcp_tool_call_asks_for_permission_and_returns_its_result(
    mcp_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(Reply.function_call("echo", {"text": "ping"}, namespace="mcp__echo"))
    handler = Recorder("approve")
    policy = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.ASK))
    async with Agent(mcp_driver(), workspace=str(workspace), policy=policy, on_approval=handler) as agent:
        events, result, error = await run_all(agent.send("echo ping"))
    assert error is None and result is not None
    (request,) = handler.seen
    assert request.title == 'Allow the echo MCP server to run tool "echo"?'
    assert request.details["arguments"] == {"text": "ping"}
    call = next(c for c in of(events, ToolCall) if c.phase is Phase.START)
    assert (call.name, call.args, request.tool_call_id) == ("mcp__echo__echo", {"text": "ping"}, call.id)
    (done,) = of(events, ToolResult)
    assert done.result["status"] == "completed"
    assert done.result["result"]["content"] == [{"type": "text", "text": "echo: ping"}]
    assert "echo: ping" in fake.model_requests[1].tool_outputs[-1]


async def test_a_denied_mcp_tool_call_is_reported_as_failed(
    mcp_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(Reply.function_call("echo", {"text": "ping"}, namespace="mcp__echo"))
    policy = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_DENY))
    async with Agent(mcp_driver(), workspace=str(workspace), policy=policy) as agent:
        events, result, error = await run_all(agent.send("echo ping"))
    assert error is None and result is not None
    (done,) = of(events, ToolResult)
    assert done.is_error and done.result["status"] == "failed"
    assert "rejected" in fake.model_requests[1].tool_outputs[-1]
