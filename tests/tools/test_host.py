"""The Agent's tool host on the reference driver: lazy loopback server with a bearer token, construction rules,
events, approvals, parallel calls, cancellation, fingerprints, and no ``mcp`` import without tools."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from _support import drain, of

from adaptor_nb import (
    Agent,
    ApprovalMode,
    ApprovalPolicy,
    ApprovalRequest,
    ConfigError,
    Notice,
    Phase,
    Policy,
    RunCancelled,
    ToolCall,
    ToolResult,
    mcp,
    tool,
)
from adaptor_nb.drivers import reference as ref
from adaptor_nb.threadstore import MemoryStore


def describe_column(name: str) -> dict[str, float]:
    """Summary statistics of one column."""
    if name == "salary":
        raise tool.reject("salaries are private")
    return {"mean": 41.5}


def scripted(*steps: object) -> ref.Driver:
    return ref.Driver(scenario=ref.scenario(ref.Turn(*steps, "done")))  # type: ignore[arg-type]


def post(url: str, headers: dict[str, str], body: dict[str, object]) -> tuple[int, str]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


async def test_the_server_starts_on_the_first_run_needs_the_token_and_stops_on_close() -> None:
    agent = Agent(scripted(ref.HostCall("describe_column", {"name": "age"})), tools=[describe_column])
    host = agent._engine.tool_host
    assert not host.started  # nothing listens before a run needs it
    _events, result, err = await drain(agent.send("go"))
    assert err is None and result is not None and host.started
    url = f"http://127.0.0.1:{host.port}/mcp/some-route"
    json_headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    for headers in ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": host.token}):
        status, _ = await asyncio.to_thread(post, url, {**json_headers, **headers}, LIST)
        assert status == 401
    good = {**json_headers, "Authorization": f"Bearer {host.token}", "MCP-Protocol-Version": "2025-06-18"}
    status, _ = await asyncio.to_thread(post, f"http://127.0.0.1:{host.port}/other", good, LIST)
    assert status == 404
    status, body = await asyncio.to_thread(post, url, good, LIST)
    assert status == 200 and [t["name"] for t in json.loads(body)["result"]["tools"]] == ["describe_column"]
    port = host.port
    await agent.close()
    assert not host.started
    with pytest.raises(OSError):
        await asyncio.to_thread(post, f"http://127.0.0.1:{port}/mcp/x", good, LIST)


async def test_host_tool_calls_are_events_under_the_tools_own_name() -> None:
    driver = scripted(
        ref.HostCall("describe_column", {"name": "age"}, id="c1"),
        ref.HostCall("describe_column", {"name": "salary"}, id="c2"),
        ref.HostCall("describe_column", {"name": 3}, id="c3"),
    )
    async with Agent(driver, tools=[describe_column]) as agent:
        events, result, err = await drain(agent.send("go"))
    assert err is None and result is not None
    ends = [c for c in of(events, ToolCall) if c.phase is Phase.END]
    assert [(c.id, c.name, c.details["host_tool"]) for c in ends] == [
        ("c1", "describe_column", True),
        ("c2", "describe_column", True),
        ("c3", "describe_column", True),
    ]
    results = of(events, ToolResult)
    assert [(r.name, r.is_error) for r in results] == [
        ("describe_column", False),
        ("describe_column", True),
        ("describe_column", True),
    ]
    assert json.loads(results[0].result["content"]) == {"mean": 41.5}
    assert results[1].result["content"] == "salaries are private"
    assert "invalid arguments" in results[2].result["content"]


async def test_two_calls_in_one_step_run_at_the_same_time() -> None:
    running: list[str] = []
    both = asyncio.Event()

    async def meet(who: str) -> str:
        running.append(who)
        if len(running) == 2:
            both.set()
        await both.wait()  # returns only once the other call is running as well
        return f"met {who}"

    driver = scripted(ref.HostCalls(ref.HostCall("meet", {"who": "a"}), ref.HostCall("meet", {"who": "b"})))
    async with Agent(driver, tools=[meet]) as agent:
        events, result, err = await asyncio.wait_for(drain(agent.send("go")), 60)
    assert err is None and result is not None
    assert sorted(r.result["content"] for r in of(events, ToolResult)) == ["met a", "met b"]


async def test_requires_approval_asks_first_and_a_denial_keeps_the_function_from_running() -> None:
    ran: list[str] = []
    asked: list[ApprovalRequest] = []

    def drop(table: str) -> str:
        ran.append(table)
        return "dropped"

    def deny(request: ApprovalRequest) -> None:
        asked.append(request)
        request.deny("no")

    policy = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.ASK))
    driver = scripted(ref.HostCall("drop", {"table": "t"}))
    async with Agent(
        driver, tools=[tool.define(drop, requires_approval=True)], policy=policy, on_approval=deny
    ) as agent:
        _events, _result, err = await drain(agent.send("go"))
    assert len(asked) == 1 and asked[0].details["tool_name"] == "drop"
    assert ran == []
    assert err is not None  # the policy's denial ends the run


async def test_cancelling_the_run_cancels_the_running_call() -> None:
    entered = asyncio.Event()
    cancelled = asyncio.Event()

    async def forever() -> str:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    async with Agent(scripted(ref.HostCall("forever")), tools=[forever]) as agent:
        stream = agent.send("go")
        await asyncio.wait_for(entered.wait(), 30)
        stream.cancel()
        _events, _result, err = await drain(stream)
        assert isinstance(err, RunCancelled)
        await asyncio.wait_for(cancelled.wait(), 30)


async def test_a_failing_tool_gives_the_host_a_notice() -> None:
    def broken() -> str:
        raise KeyError("missing")

    async with Agent(scripted(ref.HostCall("broken")), tools=[broken]) as agent:
        events, _result, err = await drain(agent.send("go"))
    assert err is None
    (notice,) = [n for n in of(events, Notice) if n.kind == "tool.error"]
    assert notice.text == "tool 'broken' failed: KeyError: 'missing'"
    (done,) = of(events, ToolResult)
    assert done.is_error and done.result["content"] == "tool 'broken' failed: KeyError"


async def test_construction_rules() -> None:
    def a() -> None: ...

    with pytest.raises(ConfigError, match="two tools are named 'a'") as clash:
        Agent(ref.Driver(), tools=[a, tool.define(a)])
    assert clash.value.option == "tools"
    with pytest.raises(ConfigError, match="mcp server 'a'"):
        Agent(ref.Driver(), tools=[a], mcp=[mcp.HTTP("a", "http://127.0.0.1:9/mcp")])
    with pytest.raises(ConfigError, match="pytools"):
        Agent(ref.Driver(), tools=[a], mcp=[mcp.HTTP("pytools", "http://127.0.0.1:9/mcp")])
    with pytest.raises(ConfigError, match="callables"):
        Agent(ref.Driver(), tools=["a"])
    with pytest.raises(TypeError, match="construction-only"):
        Agent(ref.Driver()).send("x", tools=[a])
    assert Agent(ref.Driver(), tools=[]).engine.tool_host is None


async def test_hosted_tools_survive_a_per_call_mcp_clear() -> None:
    async with Agent(scripted(ref.HostCall("describe_column", {"name": "age"})), tools=[describe_column]) as agent:
        events, _result, err = await drain(agent.send("go", mcp=[]))
    assert err is None
    (done,) = of(events, ToolResult)
    assert not done.is_error


async def test_tool_names_and_revisions_enter_the_thread_fingerprint() -> None:
    store = MemoryStore()
    v1 = tool.define(describe_column, revision="1")
    v2 = tool.define(describe_column, revision="2")
    for tools, expect_notice in (([v1], False), ([v1], False), ([v2], True)):
        async with Agent(ref.Driver(), thread_store=store, tools=tools) as agent:
            events, _result, err = await drain(agent.thread("t").send("hi"))
        assert err is None
        notices = [n for n in of(events, Notice) if n.kind == "thread.continuity"]
        assert bool(notices) is expect_notice


@pytest.mark.parametrize("with_tools", [False, True])
def test_the_mcp_package_loads_only_for_agents_with_tools(with_tools: bool) -> None:
    code = (
        "import asyncio, sys\n"
        "from adaptor_nb import Agent, tool\n"
        "from adaptor_nb.drivers import reference as ref\n"
        "def f(x: int) -> int:\n    return x\n"
        "async def main():\n"
        f"    async with Agent(ref.Driver(), tools={'[f]' if with_tools else '[]'}) as a:\n"
        "        await a.send('hi')\n"
        "asyncio.run(main())\n"
        "print('mcp' in sys.modules, 'uvicorn' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == [str(with_tools), str(with_tools)]


async def test_a_driver_that_does_not_declare_host_tools_refuses_them_before_launch() -> None:
    from dataclasses import replace

    ran: list[str] = []

    class NoHost(ref.Driver):
        def descriptor(self):  # type: ignore[no-untyped-def]
            return replace(super().descriptor(), host_tools=False)

        async def run(self, invocation, ctx):  # type: ignore[no-untyped-def]
            ran.append(invocation.prompt)
            return await super().run(invocation, ctx)

    async with Agent(NoHost(), tools=[describe_column]) as agent:
        _events, _result, err = await drain(agent.send("go"))
        assert not agent.engine.tool_host.started
    assert isinstance(err, ConfigError) and err.option == "tools" and "host_tools" in str(err)
    assert ran == []
