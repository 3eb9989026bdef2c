"""MCP servers on the real Claude CLI: --mcp-config from mcp=[...], tool calls, secrets, replace/clear/inherit."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from adaptor_nb import (
    AgentFailed,
    ApprovalMode,
    ApprovalPolicy,
    ApprovalRequest,
    InvalidMCPConfigError,
    Phase,
    Policy,
    ProcessInfo,
    ProcessKind,
    ToolCall,
    ToolResult,
    mcp,
)
from adaptor_nb.testing._anthropic import FakeAnthropicServer

from .helpers import drain, of

pytestmark = pytest.mark.claude

ECHO = str(Path(__file__).parent.parent / "fixtures" / "mcp_echo_server.py")
SECRET = "mcp-secret-value-7c41d2"
AUTO = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_APPROVE))


def echo(name: str = "echo", **env: str) -> mcp.Stdio:
    return mcp.Stdio(name, sys.executable, args=[ECHO], env=env)


def call(server: str = "echo", text: str = "ping") -> str:
    return f"[[tool mcp__{server}__echo {json.dumps({'text': text})}]] [[say finished]]"


def mcp_tools(fake: FakeAnthropicServer, index: int = 0) -> list[str]:
    return sorted(n for n in fake.message_requests[index].tool_names if n.startswith("mcp__"))


def spawns(events: list) -> list[ProcessInfo]:
    return [e for e in of(events, ProcessInfo) if e.kind is ProcessKind.SPAWN]


async def test_an_mcp_tool_call_runs_through_the_permission_flow_and_returns_the_echo(
    agent_factory, fake: FakeAnthropicServer
) -> None:
    seen: list[ApprovalRequest] = []

    def handler(request: ApprovalRequest) -> None:
        seen.append(request)
        request.approve()

    policy = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.ASK))
    agent = agent_factory(mcp=[echo(ECHO_TAG="t1")], policy=policy, on_approval=handler)
    events, result, err = await drain(agent.send(f"echo it {call()}"))
    assert err is None and result is not None and result.text == "finished"
    assert mcp_tools(fake) == ["mcp__echo__echo"]
    (request,) = seen
    assert request.details["tool_name"] == "mcp__echo__echo"
    (end,) = [c for c in of(events, ToolCall) if c.phase is Phase.END]
    assert (end.name, end.args) == ("mcp__echo__echo", {"text": "ping"})
    (done,) = of(events, ToolResult)
    assert done.id == end.id and not done.is_error
    assert "echo: ping tag=t1" in json.dumps(done.result)
    # The model's next request carries the tool_result with the server's answer.
    (tool_result,) = fake.message_requests[1].tool_results
    assert tool_result["tool_use_id"] == end.id and "echo: ping tag=t1" in json.dumps(tool_result["content"])


async def test_env_values_and_headers_reach_the_server_but_no_event_raw_stream_or_transcript(
    agent_factory, fake: FakeAnthropicServer
) -> None:
    remote = mcp.HTTP("remote", "http://127.0.0.1:9/mcp", headers={"X-Api-Key": SECRET + "-header"})
    agent = agent_factory(mcp=[echo(ECHO_SECRET=SECRET), remote], policy=AUTO)
    events, result, err = await drain(agent.send(f"echo it {call()}"))
    assert err is None and result is not None
    digest = hashlib.sha256(SECRET.encode()).hexdigest()[:12]
    assert f"secret_sha256={digest}" in json.dumps(of(events, ToolResult)[0].result)
    (spawn,) = spawns(events)
    assert "--mcp-config" in spawn.data["argv"] and "--strict-mcp-config" in spawn.data["argv"]
    seen = "\n".join(repr(e) for e in events) + repr(result.transcript()) + repr(result)
    seen += (result.raw().stdout + result.raw().stderr).decode("utf-8", "replace") + repr(agent)
    assert SECRET not in seen
    assert SECRET not in json.dumps([r.body for r in fake.message_requests])


async def test_agent_sets_the_servers_send_replaces_clears_or_inherits_them(
    agent_factory, fake: FakeAnthropicServer
) -> None:
    agent = agent_factory(mcp=[echo("first")], policy=AUTO)
    await agent.send("inherit").result()
    await agent.send("replace", mcp=[echo("second"), echo("third")]).result()
    await agent.send("clear", mcp=[]).result()
    await agent.send("inherit again", mcp=None).result()
    assert [mcp_tools(fake, i) for i in range(4)] == [
        ["mcp__first__echo"],
        ["mcp__second__echo", "mcp__third__echo"],
        [],
        ["mcp__first__echo"],
    ]


async def test_a_thread_keeps_its_process_while_the_set_is_unchanged_and_respawns_when_it_changes(
    agent_factory, fake: FakeAnthropicServer
) -> None:
    thread = agent_factory(policy=AUTO).thread("mcp-thread")
    first, _, err1 = await drain(thread.send(f"one {call('a')}", mcp=[echo("a")]))
    same, _, err2 = await drain(thread.send("two", mcp=[echo("a")]))
    changed, result, err3 = await drain(thread.send(f"three {call('b')}", mcp=[echo("b")]))
    assert (err1, err2, err3) == (None, None, None) and result is not None
    assert len(spawns(first)) == 1 and spawns(same) == []  # the same set reuses the live process
    (respawn,) = spawns(changed)
    assert respawn.data["pid"] != spawns(first)[0].data["pid"]
    assert mcp_tools(fake, len(fake.message_requests) - 1) == ["mcp__b__echo"]
    assert "echo: ping" in json.dumps(of(changed, ToolResult)[0].result)


async def test_a_required_server_that_does_not_connect_fails_the_run(agent_factory) -> None:
    broken = mcp.Stdio("broken", sys.executable, args=["-c", "import sys; sys.exit(3)"], required=True)
    _, result, err = await drain(agent_factory(mcp=[broken]).send("hi"))
    assert result is None and isinstance(err, AgentFailed)
    assert "broken" in str(err) and "did not connect" in str(err)


async def test_a_missing_bearer_token_variable_fails_before_launch(agent_factory) -> None:
    server = mcp.HTTP("remote", "https://mcp.example/mcp", bearer_token_env="ADAPTOR_NB_TEST_NO_SUCH_TOKEN")
    events, _, err = await drain(agent_factory(mcp=[server]).send("hi"))
    assert isinstance(err, InvalidMCPConfigError) and err.option == "mcp"
    assert "ADAPTOR_NB_TEST_NO_SUCH_TOKEN" in str(err)
    assert spawns(events) == []
