"""MCP servers on the real Codex CLI: mcp=[...] as config overrides, tool calls, secrets, replace/clear/inherit."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import pytest

from adaptor_nb import (
    Agent,
    AgentFailed,
    ApprovalMode,
    ApprovalPolicy,
    InvalidMCPConfigError,
    MCPTransportUnsupportedError,
    Phase,
    Policy,
    ToolCall,
    ToolResult,
    mcp,
)
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._openai import Reply

from .conftest import DriverFactory, make_home
from .helpers import of, run_all, spawned_pids

pytestmark = pytest.mark.codex

ECHO = str(Path(__file__).parent.parent / "fixtures" / "mcp_echo_server.py")
SECRET = "codex-mcp-secret-93be10"
AUTO = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_APPROVE))


def echo(name: str = "echo", **env: str) -> mcp.Stdio:
    return mcp.Stdio(name, sys.executable, args=[ECHO], env=env)


def mcp_tools(request: Any) -> list[str]:
    """The MCP tools a model request declares, as ``namespace.tool``."""
    out = []
    for tool in request.body.get("tools") or []:
        name = str(tool.get("name") or "")
        if name.startswith("mcp__"):
            out += [f"{name}.{t.get('name')}" for t in tool.get("tools") or []] or [name]
    return sorted(out)


async def test_an_mcp_tool_call_returns_the_echo_and_env_reaches_the_server_without_leaking(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(Reply.function_call("echo", {"text": "ping"}, namespace="mcp__echo"))
    server = echo(ECHO_TAG="t1", ECHO_SECRET=SECRET)
    async with Agent(make_driver(), workspace=str(workspace), policy=AUTO, mcp=[server]) as agent:
        events, result, error = await run_all(agent.send("echo ping"))
        assert SECRET not in repr(agent)
    assert error is None and result is not None
    assert mcp_tools(fake.model_requests[0]) == ["mcp__echo.echo"]
    call = next(c for c in of(events, ToolCall) if c.phase is Phase.START)
    assert (call.name, call.args) == ("mcp__echo__echo", {"text": "ping"})
    (done,) = of(events, ToolResult)
    digest = hashlib.sha256(SECRET.encode()).hexdigest()[:12]
    expected = f"echo: ping tag=t1 secret_sha256={digest}"
    assert done.result["result"]["content"] == [{"type": "text", "text": expected}]
    assert expected in fake.model_requests[1].tool_outputs[-1]
    seen = "\n".join(repr(e) for e in events) + repr(result.transcript()) + repr(result)
    seen += (result.raw().stdout + result.raw().stderr).decode("utf-8", "replace")
    assert SECRET not in seen


async def test_sse_is_refused_before_launch(make_driver: DriverFactory, workspace: Path) -> None:
    sse = mcp.SSE("legacy", "http://127.0.0.1:9/sse")
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        events, _, error = await run_all(agent.send("hi", mcp=[sse]))
    assert isinstance(error, MCPTransportUnsupportedError) and error.option == "mcp"
    assert "legacy" in str(error) and "sse" in str(error)
    assert spawned_pids(events) == []


async def test_a_set_replaces_the_homes_servers_an_empty_set_clears_them_and_none_keeps_them(
    make_driver: DriverFactory, fake: FakeOpenAIServer, tmp_path: Path, workspace: Path
) -> None:
    servers = {"mcp_servers": {"home": {"command": sys.executable, "args": [ECHO]}}}
    home = make_home(tmp_path / "codex-home-mcp", fake, settings=servers)
    driver = make_driver(codex_home=str(home))
    async with Agent(driver, workspace=str(workspace), policy=AUTO) as agent:
        for options in ({}, {"mcp": [echo("mine")]}, {"mcp": []}):
            _, _, error = await run_all(agent.send("hi", **options))
            assert error is None
        _, _, clash = await run_all(agent.send("hi", mcp=[echo("home")]))
    assert [mcp_tools(r) for r in fake.model_requests] == [["mcp__home.echo"], ["mcp__mine.echo"], []]
    assert isinstance(clash, InvalidMCPConfigError) and "home" in str(clash)


async def test_a_thread_respawns_its_app_server_when_the_set_changes(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace), policy=AUTO) as agent:
        thread = agent.thread("mcp")
        first, _, e1 = await run_all(thread.send("one", mcp=[echo("a")]))
        same, _, e2 = await run_all(thread.send("two", mcp=[echo("a")]))
        changed, _, e3 = await run_all(thread.send("three", mcp=[echo("b")]))
    assert (e1, e2, e3) == (None, None, None)
    assert len(spawned_pids(first)) == 1 and spawned_pids(same) == []
    assert spawned_pids(changed) and spawned_pids(changed) != spawned_pids(first)
    assert [mcp_tools(r) for r in fake.model_requests] == [["mcp__a.echo"], ["mcp__a.echo"], ["mcp__b.echo"]]


async def test_a_required_server_that_does_not_start_fails_the_run(make_driver: DriverFactory, workspace: Path) -> None:
    broken = mcp.Stdio("broken", sys.executable, args=["-c", "import sys; sys.exit(3)"], required=True)
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        _, result, error = await run_all(agent.send("hi", mcp=[broken]))
    assert result is None and isinstance(error, AgentFailed)
    assert "required MCP servers failed to initialize" in str(error) and "broken" in str(error)
