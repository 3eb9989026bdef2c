"""Plans and capability use on the real CodeBuddy Code CLI: its task list (TaskCreate/TaskUpdate) as plan updates,
an MCP server's tool as an MCP capability ended by its result."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from _support import drain, of

from adaptor_nb import (
    Agent,
    ApprovalMode,
    ApprovalPolicy,
    CapabilityEnd,
    CapabilityStart,
    PlanUpdate,
    Policy,
    mcp,
)
from adaptor_nb.testing import ChatReply, FakeChatCompletionsServer

from .conftest import DriverFactory

pytestmark = pytest.mark.codebuddy

ECHO = str(Path(__file__).parent.parent / "fixtures" / "mcp_echo_server.py")
AUTO = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_APPROVE))


async def test_the_task_list_is_a_plan_that_ticks(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.enqueue(ChatReply.tool("TaskCreate", {"subject": "load data", "description": "read it", "activeForm": "x"}))
    fake.enqueue(ChatReply.tool("TaskCreate", {"subject": "fit model", "description": "fit it", "activeForm": "y"}))
    fake.enqueue(ChatReply.tool("TaskUpdate", {"taskId": "1", "status": "in_progress"}))
    fake.enqueue(ChatReply.tool("TaskUpdate", {"taskId": "1", "status": "completed"}))
    fake.enqueue(ChatReply.text("planned"))
    async with Agent(make_driver(), workspace=str(workspace), policy=AUTO) as agent:
        events, result, error = await drain(agent.send("plan it"))
    assert error is None and result is not None and result.text == "planned"
    plans = of(events, PlanUpdate)
    assert [p.revision for p in plans] == [1, 2, 3, 4]
    assert {p.source for p in plans} == {"codebuddy.tasks"}
    assert [[(i.id, i.text, i.status) for i in p.items] for p in plans] == [
        [("1", "load data", "pending")],
        [("1", "load data", "pending"), ("2", "fit model", "pending")],
        [("1", "load data", "in_progress"), ("2", "fit model", "pending")],
        [("1", "load data", "completed"), ("2", "fit model", "pending")],
    ]


async def test_an_mcp_tool_is_an_mcp_capability(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.enqueue(ChatReply.tool("mcp__echo__echo", {"text": "ping"}))
    fake.enqueue(ChatReply.text("finished"))
    server = mcp.Stdio("echo", sys.executable, args=[ECHO])
    async with Agent(make_driver(), workspace=str(workspace), mcp=[server], policy=AUTO) as agent:
        events, result, error = await drain(agent.send("echo it"))
    assert error is None and result is not None
    (start,) = of(events, CapabilityStart)
    (end,) = of(events, CapabilityEnd)
    assert (start.kind, start.name, start.input) == ("mcp_tool", "echo/echo", {"text": "ping"})
    assert end.scope == start.scope and end.ok and "echo: ping" in json.dumps(end.output)
