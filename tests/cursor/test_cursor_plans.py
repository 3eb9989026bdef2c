"""Capability use on the Cursor replay: the recorded MCP tool call and subagent task as capability starts and ends.

Cursor's recorded stream-json carries no todo or plan lines, so the Cursor driver emits no plan updates.
"""

from __future__ import annotations

from _support import drain, of

from adaptor_nb import Agent, CapabilityEnd, CapabilityStart, PlanUpdate, ToolCall


async def test_the_recorded_mcp_call_and_task_are_capabilities(make_driver) -> None:
    async with Agent(make_driver("live-20260723-capabilities.jsonl")) as agent:
        events, result, err = await drain(agent.send("go"))
    assert err is None and result is not None
    starts = {s.scope: s for s in of(events, CapabilityStart)}
    ends = {e.scope: e for e in of(events, CapabilityEnd)}
    assert set(starts) == set(ends) == {"call_MCP|fc_MCP", "call_TASK|fc_TASK"}
    mcp, task = starts["call_MCP|fc_MCP"], starts["call_TASK|fc_TASK"]
    assert (mcp.kind, mcp.name, mcp.input) == ("mcp_tool", "agent-adaptor-tools/alignment_probe", {})
    assert (task.kind, task.name) == ("subagent", "alignment-planner")
    assert ends["call_MCP|fc_MCP"].ok and "T17_PLUGIN_VISIBLE" in str(ends["call_MCP|fc_MCP"].output)
    assert ends["call_TASK|fc_TASK"].ok
    for scope in starts:
        assert events.index(starts[scope]) < events.index(ends[scope])
    assert {c.id for c in of(events, ToolCall)} >= set(starts)  # the tool calls are still reported
    assert not of(events, PlanUpdate)


async def test_an_old_envelope_task_is_a_subagent_capability(make_driver) -> None:
    async with Agent(make_driver("task-tool-call.jsonl")) as agent:
        events, _, err = await drain(agent.send("go"))
    assert err is None
    (start,) = of(events, CapabilityStart)
    (end,) = of(events, CapabilityEnd)
    assert start.kind == "subagent" and end.scope == start.scope == "call-abc123" and end.ok
