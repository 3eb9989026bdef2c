"""Host tools (``tools=[...]``) on the real Codex CLI: the fake model calls a Python function on the Agent's
loopback MCP server (attached with ``-c mcp_servers.pytools...`` and a bearer token) and sees its result."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from adaptor_nb import (
    Agent,
    ApprovalMode,
    ApprovalPolicy,
    ApprovalRequest,
    Notice,
    Phase,
    Policy,
    ToolCall,
    ToolResult,
    tool,
)
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._openai import Reply

from .conftest import DriverFactory
from .helpers import of, run_all

pytestmark = pytest.mark.codex

AUTO = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_APPROVE))


def describe_column(name: str) -> dict[str, float]:
    """Summary statistics of one column.

    Args:
        name: the column
    """
    if name == "salary":
        raise tool.reject("salaries are private")
    if name == "boom":
        raise RuntimeError("lost the connection")
    return {"mean": 41.5, "count": 4.0}


def output_value(raw: str) -> object:
    """The JSON value a tool returned, from Codex's function_call_output: a string ``Wall time: ...\nOutput:\n<text>``,
    or content items whose first one is that header."""
    try:
        items = json.loads(raw)
    except ValueError:
        items = None
    if isinstance(items, list) and all(isinstance(i, dict) for i in items):
        raw = "\n".join(str(i.get("text", "")) for i in items)
    return json.loads(raw.split("Output:", 1)[1].strip())


def host_tools(request: object) -> list[str]:
    out = []
    for t in getattr(request, "body", {}).get("tools") or []:
        if str(t.get("name") or "") == "mcp__pytools":
            out += [str(x.get("name")) for x in t.get("tools") or []]
    return sorted(out)


async def test_the_model_calls_a_python_function_and_its_result_is_in_the_next_request(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(Reply.function_call("describe_column", {"name": "age"}, namespace="mcp__pytools"))
    async with Agent(make_driver(), workspace=str(workspace), policy=AUTO, tools=[describe_column]) as agent:
        events, result, error = await run_all(agent.send("stats please"))
    assert error is None and result is not None
    assert host_tools(fake.model_requests[0]) == ["describe_column"]
    (start,) = [c for c in of(events, ToolCall) if c.phase is Phase.START]
    assert (start.name, start.args, start.details["host_tool"]) == ("describe_column", {"name": "age"}, True)
    (done,) = of(events, ToolResult)
    assert done.name == "describe_column" and done.details["host_tool"] is True and not done.is_error
    output = fake.model_requests[1].tool_outputs[-1]  # Codex prefixes "Wall time: ...\nOutput:\n"
    assert json.loads(output.split("Output:\n", 1)[1]) == {"mean": 41.5, "count": 4.0}


async def test_rejections_validation_errors_and_crashes_reach_the_model_and_mcp_clear_keeps_the_tools(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    for args in ({"name": "salary"}, {"name": 7}, {"name": "boom"}):
        fake.enqueue(Reply.function_call("describe_column", args, namespace="mcp__pytools"))
    async with Agent(make_driver(), workspace=str(workspace), policy=AUTO, tools=[describe_column]) as agent:
        events, result, error = await run_all(agent.send("try them all", mcp=[]))
    assert error is None and result is not None
    outputs = [r.tool_outputs[-1] for r in fake.model_requests[1:4]]
    assert "salaries are private" in outputs[0]
    assert "invalid arguments" in outputs[1]
    # Only the tool's name and the error type reach the model; the message goes to the host's notice.
    assert "failed: RuntimeError" in outputs[2] and "lost the connection" not in outputs[2]
    assert "Traceback" not in outputs[2]
    assert [r.is_error for r in of(events, ToolResult)] == [True, True, True]
    (notice,) = [n for n in of(events, Notice) if n.kind == "tool.error"]
    assert notice.data == {"tool": "describe_column", "outcome": "failed"}
    assert "RuntimeError: lost the connection" in notice.text


async def test_only_tools_that_require_approval_are_asked_for(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    asked: list[ApprovalRequest] = []
    dropped: list[str] = []

    def approve(request: ApprovalRequest) -> None:
        asked.append(request)
        request.approve()

    def drop_table(table: str) -> str:
        """Drop a table."""
        dropped.append(table)
        return "dropped"

    fake.enqueue(
        Reply.function_call("describe_column", {"name": "age"}, namespace="mcp__pytools"),
        Reply.function_call("drop_table", {"table": "t"}, namespace="mcp__pytools"),
    )
    policy = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.ASK))
    tools = [describe_column, tool.define(drop_table, requires_approval=True)]
    async with Agent(make_driver(), workspace=str(workspace), policy=policy, on_approval=approve, tools=tools) as a:
        events, result, error = await run_all(a.send("describe, then drop"))
    assert error is None and result is not None
    assert len(asked) == 1 and "drop_table" in json.dumps(asked[0].details, default=str)
    assert dropped == ["t"]
    assert [(r.name, r.is_error) for r in of(events, ToolResult)] == [("describe_column", False), ("drop_table", False)]


async def test_the_notebooks_dataframe_tools_on_the_real_cli(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    from fixtures import weather_tools as w

    fake.enqueue(
        Reply.function_call("describe_column", {"name": "temp"}, namespace="mcp__pytools"),
        Reply.function_call("run_query", {"expr": "rain_mm > 2"}, namespace="mcp__pytools"),
    )
    async with Agent(make_driver(), workspace=str(workspace), policy=AUTO, tools=w.TOOLS) as agent:
        events, result, error = await run_all(agent.send("How warm was it, and where did it rain more than 2 mm?"))
    assert error is None and result is not None
    assert output_value(fake.model_requests[1].tool_outputs[-1]) == w.TEMP_STATS
    assert output_value(fake.model_requests[2].tool_outputs[-1]) == w.RAINY
    assert [r.name for r in of(events, ToolResult)] == ["describe_column", "run_query"]


async def test_two_calls_in_one_model_step_run_at_the_same_time(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    arrived = {"a": asyncio.Event(), "b": asyncio.Event()}

    async def meet(side: str) -> dict[str, str]:
        """Arrive, then wait for the other call: it returns only if both calls run at the same time."""
        arrived[side].set()
        await asyncio.wait_for(arrived["b" if side == "a" else "a"].wait(), 20.0)
        return {"met": side}

    fake.enqueue(
        Reply.function_calls(("meet", {"side": "a"}), ("meet", {"side": "b"}), namespace="mcp__pytools"),
        Reply.text("both met"),
    )
    async with Agent(make_driver(), workspace=str(workspace), policy=AUTO, tools=[meet]) as agent:
        events, result, error = await run_all(agent.send("meet twice"))
    assert error is None and result is not None and result.text == "both met"
    assert len(fake.model_requests) == 2  # one model step asked for both calls; the next request carries both results
    outputs = [output_value(o) for o in fake.model_requests[1].tool_outputs]
    assert sorted(outputs, key=str) == [{"met": "a"}, {"met": "b"}]
    results = of(events, ToolResult)
    assert [(r.name, r.is_error, r.details["host_tool"]) for r in results] == [("meet", False, True)] * 2
