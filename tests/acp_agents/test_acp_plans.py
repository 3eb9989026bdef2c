"""ACP on the real codex-acp: ``plan`` updates (its ``update_plan`` tool, the whole plan each time) as PlanUpdate
events with growing revisions, and calls of an MCP server's tool as MCP capabilities."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from _support import drain, of

from adaptor_nb import (
    Agent,
    ApprovalMode,
    ApprovalPolicy,
    CapabilityEnd,
    CapabilityStart,
    Notice,
    PlanUpdate,
    Policy,
    ToolCall,
    mcp,
)
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._openai import Reply

from .conftest import NetworkTripwire
from .test_acp_codex import codex_acp_bin, codex_driver, fake_responses  # noqa: F401  (fixtures)

ECHO = str(Path(__file__).parent.parent / "fixtures" / "mcp_echo_server.py")
AUTO = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_APPROVE))


async def test_codex_acp_plan_updates_are_plan_updates(
    codex_acp_bin: str,  # noqa: F811
    fake_responses: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
    tripwire: NetworkTripwire,
) -> None:
    first = {"plan": [{"step": "read", "status": "in_progress"}, {"step": "write", "status": "pending"}]}
    second = {"plan": [{"step": "read", "status": "completed"}, {"step": "write", "status": "completed"}]}
    fake_responses.enqueue(
        Reply.function_call("update_plan", first), Reply.function_call("update_plan", second), Reply.text("planned")
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with Agent(codex_driver(codex_acp_bin, tmp_path, fake_responses, tripwire), workspace=str(workspace)) as a:
        events, result, err = await drain(a.send("Plan it."))
    assert err is None and result is not None
    plans = of(events, PlanUpdate)
    assert [p.revision for p in plans] == [1, 2]
    assert [[(i.text, i.status) for i in p.items] for p in plans] == [
        [("read", "in_progress"), ("write", "pending")],
        [("read", "completed"), ("write", "completed")],
    ]
    assert {p.source for p in plans} == {"acp.plan"}
    assert not [n for n in of(events, Notice) if n.kind == "acp.plan"]


async def test_codex_acp_mcp_tool_calls_are_mcp_capabilities(
    codex_acp_bin: str,  # noqa: F811
    fake_responses: FakeOpenAIServer,  # noqa: F811
    tmp_path: Path,
    tripwire: NetworkTripwire,
) -> None:
    fake_responses.enqueue(Reply.function_call("echo", {"text": "ping"}, namespace="mcp__echo"), Reply.text("ok"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    server = mcp.Stdio("echo", sys.executable, args=[ECHO])
    driver = codex_driver(codex_acp_bin, tmp_path, fake_responses, tripwire)
    async with Agent(driver, workspace=str(workspace), mcp=[server], policy=AUTO) as a:
        events, result, err = await drain(a.send("Echo it."))
    assert err is None and result is not None
    (start,) = of(events, CapabilityStart)
    (end,) = of(events, CapabilityEnd)
    assert (start.kind, start.name, start.input) == ("mcp_tool", "echo/echo", {"text": "ping"})
    assert end.scope == start.scope and end.ok and "echo: ping" in json.dumps(end.output)
    assert of(events, ToolCall)  # still a tool call too
