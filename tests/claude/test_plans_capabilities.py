"""Plans and capability use on the real Claude Code CLI against the fake Anthropic server.

TodoWrite calls become plan updates; the Agent (Task) tool, WebSearch, a skill and an MCP server's tool become
capability starts ended by their tool results. The tool calls still show as tool calls.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from adaptor_nb import (
    ApprovalMode,
    ApprovalPolicy,
    CapabilityEnd,
    CapabilityStart,
    PlanUpdate,
    Policy,
    ToolCall,
    mcp,
    skill,
)

from .helpers import drain, of

pytestmark = pytest.mark.claude

ECHO = str(Path(__file__).parent.parent / "fixtures" / "mcp_echo_server.py")
AUTO = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_APPROVE))


def todo(*pairs: tuple[str, str]) -> str:
    todos = [{"content": c, "status": s, "activeForm": c + "ing"} for c, s in pairs]
    return f"[[tool TodoWrite {json.dumps({'todos': todos})}]]"


async def test_todowrite_calls_are_plan_updates_with_growing_revisions(agent_factory) -> None:
    prompt = " ".join(
        [
            "plan",
            todo(("load data", "in_progress"), ("fit model", "pending")),
            todo(("load data", "completed"), ("fit model", "in_progress")),
            todo(("load data", "completed"), ("fit model", "completed")),
            "[[say all done]]",
        ]
    )
    events, result, err = await drain(agent_factory(policy=AUTO).send(prompt))
    assert err is None and result is not None and result.text == "all done"
    plans = of(events, PlanUpdate)
    assert [p.revision for p in plans] == [1, 2, 3]
    assert [[(i.text, i.status) for i in p.items] for p in plans] == [
        [("load data", "in_progress"), ("fit model", "pending")],
        [("load data", "completed"), ("fit model", "in_progress")],
        [("load data", "completed"), ("fit model", "completed")],
    ]
    assert {p.source for p in plans} == {"claude.TodoWrite"}
    assert [c.name for c in of(events, ToolCall) if c.args is not None] == ["TodoWrite"] * 3
    assert [t.data["revision"] for t in result.transcript() if t.kind == "plan"] == [1, 2, 3]


async def test_the_agent_tool_is_a_subagent_capability_ended_by_its_result(agent_factory, make_config) -> None:
    task = {"description": "look around", "prompt": "sub task [[say sub done]]", "subagent_type": "general-purpose"}
    agent = agent_factory(make_config(bare=False), policy=AUTO)
    events, result, err = await drain(agent.send(f"delegate [[tool Agent {json.dumps(task)}]] [[say main done]]"))
    assert err is None and result is not None
    (start,) = of(events, CapabilityStart)
    (end,) = of(events, CapabilityEnd)
    assert (start.kind, start.name, start.input["description"]) == ("subagent", "general-purpose", "look around")
    assert (end.kind, end.scope, end.ok) == ("subagent", start.scope, True)
    assert "sub done" in json.dumps(end.output)
    assert events.index(start) < events.index(end)


async def test_an_mcp_servers_tool_is_an_mcp_capability(agent_factory) -> None:
    server = mcp.Stdio("echo", sys.executable, args=[ECHO])
    agent = agent_factory(mcp=[server], policy=AUTO)
    prompt = f"echo [[tool mcp__echo__echo {json.dumps({'text': 'ping'})}]] [[say finished]]"
    events, result, err = await drain(agent.send(prompt))
    assert err is None and result is not None
    (start,) = of(events, CapabilityStart)
    (end,) = of(events, CapabilityEnd)
    assert (start.kind, start.name, start.input) == ("mcp_tool", "echo/echo", {"text": "ping"})
    assert end.scope == start.scope and end.ok and "echo: ping" in json.dumps(end.output)


async def test_web_search_is_a_web_search_capability(agent_factory) -> None:
    prompt = f"search [[tool WebSearch {json.dumps({'query': 'pandas pivot'})}]] [[say searched]]"
    events, result, err = await drain(agent_factory(policy=AUTO).send(prompt))
    assert err is None and result is not None
    (start,) = of(events, CapabilityStart)
    (end,) = of(events, CapabilityEnd)
    assert (start.kind, start.name, start.input) == ("web_search", "WebSearch", {"query": "pandas pivot"})
    assert end.scope == start.scope


async def test_a_skill_tool_call_is_a_skill_capability(agent_factory, make_config) -> None:
    review = skill.Inline("review-checklist", "Say: checklist read.", description="Use when reviewing a change")
    agent = agent_factory(make_config(bare=False), skills=[review], policy=AUTO)
    prompt = f"review [[tool Skill {json.dumps({'skill': 'review-checklist'})}]] [[say reviewed]]"
    events, result, err = await drain(agent.send(prompt))
    assert err is None and result is not None
    (start,) = of(events, CapabilityStart)
    (end,) = of(events, CapabilityEnd)
    assert (start.kind, start.name) == ("skill", "review-checklist")
    assert end.scope == start.scope
