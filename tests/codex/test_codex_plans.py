"""Plans and capability use on Codex: ``turn/plan/updated`` as plan updates (recorded and on the real CLI), and an
MCP server's tool call as an MCP capability ended by its result; host tools stay plain tools."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from adaptor_nb import (
    Agent,
    ApprovalMode,
    ApprovalPolicy,
    CapabilityEnd,
    CapabilityStart,
    Notice,
    PlanItem,
    PlanUpdate,
    Policy,
    ToolResult,
    mcp,
)
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._openai import Reply

from .conftest import CATALOG_MODEL, DriverFactory
from .helpers import of, run_all
from .test_codex_translate import replay

ECHO = str(Path(__file__).parent.parent / "fixtures" / "mcp_echo_server.py")
AUTO = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_APPROVE))


def test_a_recorded_plan_update_is_a_plan_update_next_to_its_notice() -> None:
    _, outputs, _ = replay("plan")
    (plan,) = [o for o in outputs if isinstance(o, PlanUpdate)]
    assert plan.items == (PlanItem("a", "completed"), PlanItem("b", "pending"))
    assert plan.source == "codex.plan"
    assert [o for o in outputs if isinstance(o, Notice) and o.kind == "plan"]


@pytest.mark.codex
async def test_update_plan_calls_are_plan_updates_that_tick(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    first = {"plan": [{"step": "read", "status": "in_progress"}, {"step": "write", "status": "pending"}]}
    second = {"plan": [{"step": "read", "status": "completed"}, {"step": "write", "status": "in_progress"}],
              "explanation": "read it"}  # fmt: skip
    fake.enqueue(Reply.function_call("update_plan", first))
    fake.enqueue(Reply.function_call("update_plan", second))
    driver = make_driver(model=CATALOG_MODEL, config={"tools": {"update_plan": {"enabled": True}}})
    async with Agent(driver, workspace=str(workspace)) as agent:
        events, result, error = await run_all(agent.send("plan it"))
    assert error is None and result is not None
    plans = of(events, PlanUpdate)
    assert [p.revision for p in plans] == [1, 2]
    assert [[(i.text, i.status) for i in p.items] for p in plans] == [
        [("read", "in_progress"), ("write", "pending")],
        [("read", "completed"), ("write", "in_progress")],
    ]
    assert plans[0].items[0].raw_status == "inProgress" and plans[1].explanation == "read it"
    assert [t.data["revision"] for t in result.transcript() if t.kind == "plan"] == [1, 2]


@pytest.mark.codex
async def test_an_mcp_tool_call_is_an_mcp_capability(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(Reply.function_call("echo", {"text": "ping"}, namespace="mcp__echo"))
    server = mcp.Stdio("echo", sys.executable, args=[ECHO])
    async with Agent(make_driver(), workspace=str(workspace), policy=AUTO, mcp=[server]) as agent:
        events, result, error = await run_all(agent.send("echo ping"))
    assert error is None and result is not None
    (start,) = of(events, CapabilityStart)
    (end,) = of(events, CapabilityEnd)
    assert (start.kind, start.name, start.input) == ("mcp_tool", "echo/echo", {"text": "ping"})
    assert end.scope == start.scope and end.ok and "echo: ping" in json.dumps(end.output)


def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: the first
        b: the second
    """
    return a + b


@pytest.mark.codex
async def test_a_host_tool_is_not_a_capability(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(Reply.function_call("add", {"a": 1, "b": 2}, namespace="mcp__pytools"))
    async with Agent(make_driver(), workspace=str(workspace), policy=AUTO, tools=[add]) as agent:
        events, result, error = await run_all(agent.send("add"))
    assert error is None and result is not None
    assert [r.name for r in of(events, ToolResult) if not r.is_error] == ["add"]
    assert not of(events, CapabilityStart) and not of(events, CapabilityEnd)


@pytest.mark.codex
async def test_a_web_search_is_a_web_search_capability(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(Reply(answer="searched", web_search="pandas pivot"))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        events, result, error = await run_all(agent.send("search"))
    assert error is None and result is not None and result.text == "searched"
    (start,) = of(events, CapabilityStart)
    (end,) = of(events, CapabilityEnd)
    assert (start.kind, start.name) == ("web_search", "web_search")
    assert end.scope == start.scope and end.ok
    assert "pandas pivot" in json.dumps(end.output)
