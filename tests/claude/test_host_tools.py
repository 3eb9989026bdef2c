"""Host tools (``tools=[...]``) on the real Claude CLI: the fake model calls a Python function, which the CLI reaches
as an SDK MCP server over its control channel, and sees its result in the next request."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import psutil
import pytest

from adaptor_nb import (
    ApprovalMode,
    ApprovalPolicy,
    ApprovalRequest,
    Notice,
    Phase,
    Policy,
    ProcessInfo,
    ProcessKind,
    RunCancelled,
    ToolCall,
    ToolResult,
    tool,
)
from adaptor_nb.testing._anthropic import FakeAnthropicServer, Reply, ToolUseBlock

from .helpers import drain, of

pytestmark = pytest.mark.claude

CALLS: list[str] = []


def describe_column(name: str) -> dict[str, float]:
    """Summary statistics of one column.

    Args:
        name: the column
    """
    CALLS.append(name)
    if name == "salary":
        raise tool.reject("salaries are private")
    if name == "boom":
        raise RuntimeError("database password hunter2-db-secret leaked")
    return {"mean": 41.5, "count": 4.0}


def text_of(tool_result: dict[str, Any]) -> str:
    content = tool_result["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict))


def call(name: str, args: dict[str, object]) -> str:
    return f"[[tool mcp__pytools__{name} {json.dumps(args)}]] [[say finished]]"


async def test_the_model_calls_a_python_function_and_its_result_is_in_the_next_request(
    agent_factory, fake: FakeAnthropicServer
) -> None:
    agent = agent_factory(tools=[tool.define(describe_column)])
    events, result, err = await drain(agent.send("stats " + call("describe_column", {"name": "age"})))
    assert err is None and result is not None and result.text == "finished"
    (spec,) = [fake.message_requests[0].tool("mcp__pytools__describe_column")]
    assert spec is not None and spec["input_schema"]["properties"]["name"]["description"] == "the column"
    (end,) = [c for c in of(events, ToolCall) if c.phase is Phase.END]
    assert (end.name, end.args, end.details.get("host_tool")) == ("describe_column", {"name": "age"}, True)
    (done,) = of(events, ToolResult)
    assert done.name == "describe_column" and done.details["host_tool"] is True and not done.is_error
    (sent,) = fake.message_requests[1].tool_results
    assert sent["tool_use_id"] == end.id and json.loads(text_of(sent)) == {"mean": 41.5, "count": 4.0}


async def test_rejections_validation_errors_and_crashes_reach_the_model_sanitized(
    agent_factory, fake: FakeAnthropicServer
) -> None:
    agent = agent_factory(tools=[describe_column])
    prompt = (
        '[[tool mcp__pytools__describe_column {"name": "salary"}]] '
        '[[tool mcp__pytools__describe_column {"name": 7}]] '
        '[[tool mcp__pytools__describe_column {"name": "boom"}]] [[say finished]]'
    )
    CALLS.clear()
    events, result, err = await drain(agent.send(prompt))
    assert err is None and result is not None and result.text == "finished"
    sent = [json.dumps(r["content"]) for req in fake.message_requests[1:] for r in req.tool_results[-1:]]
    assert "salaries are private" in sent[0]
    assert "invalid arguments" in sent[1] and "name" in sent[1]
    assert "RuntimeError" in sent[2] and "Traceback" not in sent[2]
    assert CALLS == ["salary", "boom"]  # the ill-typed call never reached the function
    results = of(events, ToolResult)
    assert [r.is_error for r in results] == [True, True, True]
    (notice,) = [n for n in of(events, Notice) if n.kind == "tool.error"]
    assert notice.data == {"tool": "describe_column", "outcome": "failed"}


async def test_two_parallel_calls_in_one_model_step(agent_factory, fake: FakeAnthropicServer) -> None:
    arrived = {"a": asyncio.Event(), "b": asyncio.Event()}

    async def meet(side: str) -> str:
        """Arrive, then wait for the other call: it returns only if both calls run at the same time."""
        arrived[side].set()
        await asyncio.wait_for(arrived["b" if side == "a" else "a"].wait(), 20.0)
        return f"met {side}"

    fake.enqueue(
        Reply(
            blocks=(
                ToolUseBlock("mcp__pytools__meet", {"side": "a"}, id="toolu_a"),
                ToolUseBlock("mcp__pytools__meet", {"side": "b"}, id="toolu_b"),
            )
        ),
        Reply.text("both done"),
    )
    agent = agent_factory(tools=[meet])
    events, result, err = await drain(agent.send("go"))
    assert err is None and result is not None and result.text == "both done"
    assert len(fake.message_requests) == 2  # one model step asked for both; the next request carries both results
    assert sorted((r.id, r.name, r.is_error, r.details["host_tool"]) for r in of(events, ToolResult)) == [
        ("toolu_a", "meet", False, True),
        ("toolu_b", "meet", False, True),
    ]
    sent = {r["tool_use_id"]: text_of(r) for r in fake.message_requests[1].tool_results}
    assert sent == {"toolu_a": "met a", "toolu_b": "met b"}


async def test_a_tool_that_requires_approval_goes_through_the_permission_flow(
    agent_factory, fake: FakeAnthropicServer
) -> None:
    seen: list[ApprovalRequest] = []

    def handler(request: ApprovalRequest) -> None:
        seen.append(request)
        request.approve()

    dropped: list[str] = []

    def drop_table(table: str) -> str:
        """Drop a table."""
        assert seen, "ran before its approval"
        dropped.append(table)
        return f"dropped {table}"

    policy = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.ASK))
    agent = agent_factory(
        tools=[tool.define(drop_table, requires_approval=True), describe_column], policy=policy, on_approval=handler
    )
    prompt = (
        '[[tool mcp__pytools__describe_column {"name": "age"}]] '
        '[[tool mcp__pytools__drop_table {"table": "t"}]] [[say finished]]'
    )
    events, result, err = await drain(agent.send(prompt))
    assert err is None and result is not None
    (request,) = seen  # describe_column needed no approval
    assert "drop_table" in request.details["tool_name"]
    assert dropped == ["t"]
    results = of(events, ToolResult)
    assert [(r.name, r.is_error) for r in results] == [("describe_column", False), ("drop_table", False)]


async def test_hosted_tools_survive_a_per_call_mcp_clear_and_close_stops_the_server(
    agent_factory, fake: FakeAnthropicServer
) -> None:
    agent = agent_factory(tools=[describe_column])
    events, result, err = await drain(agent.send(call("describe_column", {"name": "age"}), mcp=[]))
    assert err is None and result is not None
    assert "mcp__pytools__describe_column" in fake.message_requests[0].tool_names
    (done,) = of(events, ToolResult)
    assert done.name == "describe_column" and not done.is_error
    host = agent._engine.tool_host
    assert host.started and not host.listening
    await agent.close()
    assert not host.started


async def test_a_call_longer_than_the_clis_mcp_tool_timeout_still_returns(
    agent_factory, make_config, fake: FakeAnthropicServer
) -> None:
    async def slow_sum(a: int, b: int) -> int:
        await asyncio.sleep(2.5)  # the tool's own work: longer than the CLI's MCP_TOOL_TIMEOUT below
        return a + b

    config = make_config(env={"MCP_TOOL_TIMEOUT": "1000"})  # the CLI would give up on an MCP call after 1 s
    agent = agent_factory(config, tools=[slow_sum])
    events, result, err = await drain(agent.send(call("slow_sum", {"a": 2, "b": 3})))
    assert err is None and result is not None
    (done,) = of(events, ToolResult)
    assert not done.is_error
    (sent,) = fake.message_requests[1].tool_results
    assert text_of(sent) == "5"


async def log_line(path: Path, text: str) -> None:
    """Return once a line containing ``text`` is written to ``path`` (followed with ``tail -F``)."""
    tail = await asyncio.create_subprocess_exec(
        "tail", "-F", "-n", "+1", str(path), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    try:
        assert tail.stdout is not None
        while line := await tail.stdout.readline():
            if text.encode() in line:
                return
        raise AssertionError(f"tail ended before {text!r} appeared in {path}")
    finally:
        if tail.returncode is None:
            tail.kill()
        await tail.wait()


async def test_a_call_silent_past_the_clis_idle_watchdog_still_returns(
    agent_factory, make_config, fake: FakeAnthropicServer, tmp_path: Path
) -> None:
    """Claude Code cuts an http/sse/ws MCP call that sent nothing for CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT (checked every
    30 s); an SDK server is not among those types, so on the control channel the watchdog only logs. No keep-alive
    runs on this path (the HTTP server, which sends them, is never started). The tool returns only once the CLI's
    debug log shows the watchdog has looked at the running call (its "still running" line), i.e. well past the
    1.5 s idle limit: were the limit applied to this call, it would have been aborted at that look."""
    debug_log = tmp_path / "claude-debug.log"

    async def patient(x: int) -> int:
        await log_line(debug_log, "still running")  # the watchdog's first look at this call
        return x + 1

    config = make_config(env={"CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT": "1500"}, extra_args=["--debug-file", str(debug_log)])
    agent = agent_factory(config, tools=[patient])
    host = agent._engine.tool_host
    events, result, err = await drain(agent.send(call("patient", {"x": 41})))
    assert err is None and result is not None
    (done,) = of(events, ToolResult)
    assert not done.is_error, done
    (sent,) = fake.message_requests[1].tool_results
    assert text_of(sent) == "42"
    log = debug_log.read_text(errors="replace")
    assert "still running" in log and "idle timeout" not in log
    assert not host.listening and host.keepalives == 0  # the call went over the control channel, not HTTP


async def test_the_notebooks_dataframe_tools_on_the_real_cli(agent_factory, fake: FakeAnthropicServer) -> None:
    from fixtures import weather_tools as w

    fake.enqueue(
        Reply(
            blocks=(
                ToolUseBlock("mcp__pytools__describe_column", {"name": "temp"}, id="toolu_stats"),
                ToolUseBlock("mcp__pytools__run_query", {"expr": "rain_mm > 2"}, id="toolu_rain"),
            )
        ),
        Reply.text("It was 20.1 °C on average; it rained in Graz."),
    )
    agent = agent_factory(tools=w.TOOLS)
    events, result, err = await drain(agent.send("How warm was it, and where did it rain more than 2 mm?"))
    assert err is None and result is not None
    sent = {r["tool_use_id"]: json.loads(text_of(r)) for r in fake.message_requests[1].tool_results}
    assert sent["toolu_stats"] == w.TEMP_STATS
    assert sent["toolu_rain"] == w.RAINY
    assert sorted(r.name for r in of(events, ToolResult)) == ["describe_column", "run_query"]


def _children_environ() -> list[bytes]:
    """The command lines and environments of this process's children (the CLI is one of them)."""
    import os

    seen: list[bytes] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) != os.getpid():
                continue
            seen.append((entry / "cmdline").read_bytes() + b"\0" + (entry / "environ").read_bytes())
        except (OSError, ValueError, IndexError):
            continue
    return seen


async def test_claude_reaches_host_tools_over_its_control_channel_without_http_or_token(
    agent_factory, fake: FakeAnthropicServer
) -> None:
    """The CLI is given ``pytools`` as an SDK server: its MCP messages come back on stdin/stdout, so neither an
    http entry nor the bearer token is on its command line or in its environment, and no keep-alive is sent."""
    processes: list[list[bytes]] = []

    def peek(x: int) -> int:
        processes.append(_children_environ())  # while the CLI that asked is still running
        return x * 2

    agent = agent_factory(tools=[peek])
    events, result, err = await drain(agent.send(call("peek", {"x": 21})))
    assert err is None and result is not None
    (done,) = of(events, ToolResult)
    assert done.name == "peek" and done.details["host_tool"] and not done.is_error
    (sent,) = fake.message_requests[1].tool_results
    assert text_of(sent) == "42"
    (spawn,) = [e for e in of(events, ProcessInfo) if e.kind is ProcessKind.SPAWN]
    argv = spawn.data["argv"]
    servers = json.loads(argv[argv.index("--mcp-config") + 1])["mcpServers"]
    assert servers["pytools"]["type"] == "sdk" and servers["pytools"]["name"] == "pytools"
    assert not any(isinstance(s, dict) and s.get("type") == "http" for s in servers.values())
    host = agent._engine.tool_host
    (children,) = processes
    assert children, "the CLI was not found among this process's children"
    token_var = host._token_env.encode() + b"="
    assert not any(token_var in c for c in children)
    # A Claude-only Agent never started the loopback server: no socket was bound, no token was minted.
    assert host.started and not host.listening
    assert host._server is None and host.token is None and host.port == 0
    assert host.keepalives == 0


def spawns(events: list[Any]) -> list[int]:
    return [p.data["pid"] for p in of(events, ProcessInfo) if p.kind is ProcessKind.SPAWN]


def tool_notices(events: list[Any]) -> list[Notice]:
    return [n for n in of(events, Notice) if n.kind == "tool.error"]


async def test_a_threads_parked_process_keeps_serving_host_tools_turn_after_turn(
    agent_factory, fake: FakeAnthropicServer
) -> None:
    """Turns 2 and 3 reuse the Thread's one claude process: its SDK server still answers, and a failing call of
    turn 2 reports its Notice to turn 2 only. ``agent.close()`` leaves no process behind."""
    agent = agent_factory(tools=[tool.define(describe_column, revision="1")])
    thread = agent.thread("parked")
    ev1, r1, e1 = await drain(thread.send("one " + call("describe_column", {"name": "age"})))
    ev2, r2, e2 = await drain(thread.send("two " + call("describe_column", {"name": "boom"})))
    ev3, r3, e3 = await drain(thread.send("three " + call("describe_column", {"name": "height"})))
    assert (e1, e2, e3) == (None, None, None) and r1 and r2 and r3
    [pid] = spawns(ev1)
    assert spawns(ev2) == [] and spawns(ev3) == []  # the same parked process served all three turns
    results = [of(ev, ToolResult) for ev in (ev1, ev2, ev3)]
    assert [[(r.name, r.is_error) for r in rs] for rs in results] == [
        [("describe_column", False)],
        [("describe_column", True)],
        [("describe_column", False)],
    ]
    assert tool_notices(ev1) == [] and tool_notices(ev3) == []
    (notice,) = tool_notices(ev2)
    assert notice.data == {"tool": "describe_column", "outcome": "failed"}
    last = fake.message_requests[-1].tool_results[-1]
    assert json.loads(text_of(last)) == {"mean": 41.5, "count": 4.0}
    assert psutil.pid_exists(pid)
    await agent.close()
    assert not psutil.pid_exists(pid)


async def test_a_call_cancelled_in_one_turn_does_not_leak_into_the_next(
    agent_factory, fake: FakeAnthropicServer
) -> None:
    """Turn 2 is cancelled while its host-tool call runs: the call is cancelled with it, and turn 3 runs only its own
    call, with no Notice or result of turn 2's. agent.close() leaves no process behind."""
    entered = asyncio.Event()
    outcomes: list[str] = []

    async def hang(tag: str) -> str:
        """Wait until cancelled."""
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            outcomes.append(f"cancelled {tag}")
            raise
        return "never"

    def shout(text: str) -> str:
        """Upper-case."""
        outcomes.append(f"shout {text}")
        return text.upper()

    agent = agent_factory(tools=[tool.define(hang, revision="1"), tool.define(shout, revision="1")])
    thread = agent.thread("cancel")
    ev1, r1, e1 = await drain(thread.send("one " + call("shout", {"text": "a"})))
    assert e1 is None and r1 is not None
    stream = thread.send("two " + call("hang", {"tag": "t2"}))
    await asyncio.wait_for(entered.wait(), 60.0)
    stream.cancel()
    ev2, _r2, e2 = await drain(stream)
    assert isinstance(e2, RunCancelled), e2
    assert outcomes == ["shout a", "cancelled t2"]  # the running call was cancelled with its run
    asked = len(fake.message_requests)
    ev3, r3, e3 = await drain(thread.send("three " + call("shout", {"text": "hi"})))
    assert e3 is None and r3 is not None and r3.text == "finished"
    assert outcomes == ["shout a", "cancelled t2", "shout hi"]  # turn 3 ran only its own call
    assert [(r.name, r.is_error) for r in of(ev3, ToolResult)] == [("shout", False)]
    assert tool_notices(ev3) == []
    sent = [text_of(r) for req in fake.message_requests[asked:] for r in req.tool_results]
    assert "HI" in sent and not any("cancelled" in t for t in sent[sent.index("HI") :])
    [pid] = spawns(ev1)
    assert spawns(ev2) == [] and spawns(ev3) == []  # the interrupted process settled and was parked for turn 3
    await agent.close()
    assert not psutil.pid_exists(pid)


async def test_two_threads_of_one_agent_call_host_tools_at_the_same_time(
    agent_factory, fake: FakeAnthropicServer
) -> None:
    """Each Thread has its own claude process and route: both calls run at once (each waits for the other), and the
    failing call's Notice reaches only the Thread whose model made it."""
    arrived = {"a": asyncio.Event(), "b": asyncio.Event()}

    async def meet(side: str) -> str:
        """Arrive, then wait for the other side."""
        arrived[side].set()
        await asyncio.wait_for(arrived["b" if side == "a" else "a"].wait(), 60.0)
        if side == "b":
            raise RuntimeError("side b fails after meeting")
        return f"met {side}"

    agent = agent_factory(tools=[tool.define(meet, revision="1")])
    (ev_a, r_a, e_a), (ev_b, r_b, e_b) = await asyncio.gather(
        drain(agent.thread("a").send("a " + call("meet", {"side": "a"}))),
        drain(agent.thread("b").send("b " + call("meet", {"side": "b"}))),
    )
    assert e_a is None and e_b is None and r_a is not None and r_b is not None
    [pid_a], [pid_b] = spawns(ev_a), spawns(ev_b)
    assert pid_a != pid_b
    assert [(r.name, r.is_error) for r in of(ev_a, ToolResult)] == [("meet", False)]
    assert [(r.name, r.is_error) for r in of(ev_b, ToolResult)] == [("meet", True)]
    assert tool_notices(ev_a) == []
    (notice,) = tool_notices(ev_b)
    assert notice.data == {"tool": "meet", "outcome": "failed"}
    sent = sorted(text_of(r) for req in fake.message_requests for r in req.tool_results)
    assert sent[0] == "met a" and sent[1].startswith("tool 'meet' failed: RuntimeError")
    await agent.close()
    assert not psutil.pid_exists(pid_a) and not psutil.pid_exists(pid_b)
