"""MCP servers on the real CodeBuddy Code CLI: ``--mcp-config`` + ``--strict-mcp-config`` with the stdio echo server,
a direct call and a ``DeferExecuteTool``-wrapped call, the answer in the model's next request, secrets kept out."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
from _support import drain, of

from adaptor_nb import (
    Agent,
    ApprovalMode,
    ApprovalPolicy,
    ApprovalRequest,
    Phase,
    Policy,
    ProcessInfo,
    ProcessKind,
    ToolCall,
    ToolResult,
    mcp,
)
from adaptor_nb.testing import ChatReply, FakeChatCompletionsServer

from .conftest import DriverFactory

pytestmark = pytest.mark.codebuddy

ECHO = str(Path(__file__).parent.parent / "fixtures" / "mcp_echo_server.py")
SECRET = "mcp-secret-value-codebuddy-51e0"


def echo(name: str = "echo", **env: str) -> mcp.Stdio:
    return mcp.Stdio(name, sys.executable, args=[ECHO], env=env)


async def test_the_model_calls_an_mcp_tool_and_its_answer_is_in_the_next_request(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.enqueue(ChatReply.tool("mcp__echo__echo", {"text": "ping"}))
    fake.enqueue(ChatReply.text("finished"))
    asked: list[ApprovalRequest] = []

    def handler(request: ApprovalRequest) -> None:
        asked.append(request)
        request.approve()

    policy = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.ASK))
    async with Agent(make_driver(), workspace=str(workspace), mcp=[echo(ECHO_TAG="t1")], on_approval=handler) as agent:
        events, result, error = await drain(agent.send("echo it", policy=policy))
    assert error is None and result is not None and result.text == "finished"
    (spawn,) = [e for e in of(events, ProcessInfo) if e.kind is ProcessKind.SPAWN]
    argv = spawn.data["argv"]
    assert "--strict-mcp-config" in argv
    config = json.loads(argv[argv.index("--mcp-config") + 1])
    assert config["mcpServers"]["echo"]["type"] == "stdio"
    (request,) = asked
    assert request.details["tool_name"] == "mcp__echo__echo"
    (end,) = [c for c in of(events, ToolCall) if c.phase is Phase.END]
    assert (end.name, end.args) == ("mcp__echo__echo", {"text": "ping"})
    (done,) = of(events, ToolResult)
    assert done.id == end.id and not done.is_error and "echo: ping tag=t1" in json.dumps(done.result)
    assert "echo: ping tag=t1" in fake.model_requests[1].tool_outputs[-1]


async def test_a_deferred_call_is_asked_as_the_mcp_tool_it_wraps(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.enqueue(ChatReply.tool("DeferExecuteTool", {"toolName": "mcp__echo__echo", "params": {"text": "via defer"}}))
    fake.enqueue(ChatReply.text("deferred done"))
    asked: list[ApprovalRequest] = []

    def handler(request: ApprovalRequest) -> None:
        asked.append(request)
        request.approve()

    policy = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.ASK))
    async with Agent(make_driver(), workspace=str(workspace), mcp=[echo()], on_approval=handler) as agent:
        events, result, error = await drain(agent.send("defer it", policy=policy))
    assert error is None and result is not None and result.text == "deferred done"
    (request,) = asked
    assert (request.details["tool_name"], request.details["input"]) == ("mcp__echo__echo", {"text": "via defer"})
    (done,) = of(events, ToolResult)
    assert not done.is_error and "echo: via defer" in json.dumps(done.result)
    assert "echo: via defer" in fake.model_requests[1].tool_outputs[-1]


async def test_an_mcp_secret_reaches_the_server_but_no_event_raw_stream_or_request(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.enqueue(ChatReply.tool("mcp__echo__echo", {"text": "ping"}))
    fake.enqueue(ChatReply.text("finished"))
    policy = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_APPROVE))
    async with Agent(make_driver(), workspace=str(workspace), mcp=[echo(ECHO_SECRET=SECRET)]) as agent:
        events, result, error = await drain(agent.send("echo it", policy=policy))
        seen_agent = repr(agent)
    assert error is None and result is not None
    digest = hashlib.sha256(SECRET.encode()).hexdigest()[:12]
    assert f"secret_sha256={digest}" in json.dumps(of(events, ToolResult)[0].result)
    seen = "\n".join(repr(e) for e in events) + repr(result.transcript()) + repr(result) + seen_agent
    seen += (result.raw().stdout + result.raw().stderr).decode("utf-8", "replace")
    assert SECRET not in seen
    assert SECRET not in json.dumps([r.body for r in fake.requests])
