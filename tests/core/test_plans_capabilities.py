"""Plans and capability use: revisions numbered by the core, every capability start ended, both in the transcript."""

from __future__ import annotations

import pytest

from adaptor_nb import (
    Agent,
    CapabilityEnd,
    CapabilityStart,
    PlanItem,
    PlanUpdate,
    RunCancelled,
    RunError,
    RunFinished,
    ToolCall,
)
from adaptor_nb.drivers import reference as ref

from .helpers import collect, done_of, of_type


def _plan(*pairs: tuple[str, str]) -> PlanUpdate:
    return PlanUpdate(items=tuple(PlanItem(text=t, status=s) for t, s in pairs), source="test.plan")  # type: ignore[arg-type]


def test_unknown_statuses_map_to_the_nearest_and_keep_the_raw_word() -> None:
    assert PlanItem("a", "in_progress") == PlanItem("a", "in_progress", raw_status="")
    assert (PlanItem("a", "inProgress").status, PlanItem("a", "inProgress").raw_status) == ("in_progress", "inProgress")  # type: ignore[arg-type]
    assert (PlanItem("b", "done").status, PlanItem("b", "done").raw_status) == ("completed", "done")  # type: ignore[arg-type]
    assert PlanItem("c", "cancelled").status == "completed"  # type: ignore[arg-type]
    assert (PlanItem("d", "weird").status, PlanItem("d", "weird").raw_status) == ("pending", "weird")  # type: ignore[arg-type]
    assert PlanUpdate(items=[PlanItem("x")]).items == (PlanItem("x"),)  # type: ignore[arg-type]


async def test_plan_revisions_grow_by_one_per_update_and_restart_per_run() -> None:
    turn = ref.Turn(
        ref.Emit(_plan(("read", "in_progress"), ("write", "pending"))),
        "working ",
        ref.Emit(_plan(("read", "completed"), ("write", "in_progress"))),
        ref.Emit(_plan(("read", "completed"), ("write", "completed"))),
        "done",
    )
    agent = Agent(ref.Driver(scenario=ref.Scenario(turn)))
    for _ in range(2):
        stream = agent.send("plan it")
        events = await collect(stream)
        plans = of_type(events, PlanUpdate)
        assert [p.revision for p in plans] == [1, 2, 3]
        assert [[i.status for i in p.items] for p in plans][-1] == ["completed", "completed"]
        result = await stream.result()
        items = [t for t in result.transcript() if t.kind == "plan"]
        assert [t.data["revision"] for t in items] == [1, 2, 3]
        assert items[0].data["items"] == [
            {"text": "read", "status": "in_progress"},
            {"text": "write", "status": "pending"},
        ]


async def test_capability_start_and_end_pair_by_scope_and_are_transcribed() -> None:
    turn = ref.Turn(
        ref.Emit(CapabilityStart(kind="web_search", name="WebSearch", scope="s1", input={"query": "q"})),
        ref.Emit(CapabilityEnd(kind="web_search", name="WebSearch", scope="s1", output={"hits": 2})),
        "ok",
    )
    stream = Agent(ref.Driver(scenario=ref.Scenario(turn))).send("search")
    events = await collect(stream)
    starts, ends = of_type(events, CapabilityStart), of_type(events, CapabilityEnd)
    assert [(s.scope, s.input) for s in starts] == [("s1", {"query": "q"})]
    assert [(e.scope, e.ok, e.output) for e in ends] == [("s1", True, {"hits": 2})]
    kinds = [(t.kind, t.tool_use_id, t.is_error) for t in (await stream.result()).transcript()]
    assert ("capability_start", "s1", False) in kinds and ("capability_end", "s1", False) in kinds


async def test_a_failed_run_ends_every_open_capability_with_ok_false_before_run_finished() -> None:
    turn = ref.Turn(
        ref.Emit(
            CapabilityStart(kind="subagent", name="Task", scope="a"),
            CapabilityStart(kind="mcp_tool", name="docs/search", scope="b"),
            CapabilityEnd(kind="mcp_tool", name="docs/search", scope="b"),
            CapabilityStart(kind="skill", name="pdf", scope="c"),
        ),
        ref.Fail("boom"),
    )
    stream = Agent(ref.Driver(scenario=ref.Scenario(turn))).send("go")
    events = await collect(stream)
    ends = of_type(events, CapabilityEnd)
    assert [(e.scope, e.ok, e.kind) for e in ends] == [
        ("b", True, "mcp_tool"),
        ("a", False, "subagent"),
        ("c", False, "skill"),
    ]
    finished = next(i for i, e in enumerate(events) if isinstance(e, RunFinished))
    assert all(events.index(e) < finished for e in ends)
    err = done_of(events).err
    assert isinstance(err, RunError) and err.result is not None
    closed = [t.tool_use_id for t in err.result.transcript() if t.kind == "capability_end" and t.is_error]
    assert closed == ["a", "c"]


async def test_a_cancelled_run_ends_its_open_capabilities() -> None:
    gate = ref.Gate()
    turn = ref.Turn(ref.Emit(CapabilityStart(kind="web_search", name="WebSearch", scope="w")), gate, "never")
    stream = Agent(ref.Driver(scenario=ref.Scenario(turn))).send("go")
    events = []
    async for ev in stream.events():
        events.append(ev)
        if isinstance(ev, CapabilityStart):
            await gate.reached.wait()
            stream.cancel()
    ends = of_type(events, CapabilityEnd)
    assert [(e.scope, e.ok) for e in ends] == [("w", False)]
    assert isinstance(done_of(events).err, RunCancelled)


async def test_tools_still_show_as_tools() -> None:
    turn = ref.Turn(ref.ToolUse("WebSearch", {"query": "q"}, {"ok": True}), "ok")
    events = await collect(Agent(ref.Driver(scenario=ref.Scenario(turn))).send("x"))
    assert of_type(events, ToolCall) and not of_type(events, CapabilityStart)


@pytest.mark.parametrize("status", ["pending", "in_progress", "completed"])
def test_the_three_statuses_are_kept_as_given(status: str) -> None:
    item = PlanItem("x", status)  # type: ignore[arg-type]
    assert (item.status, item.raw_status) == (status, "")
