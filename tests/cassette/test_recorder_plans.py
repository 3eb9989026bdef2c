"""Plan updates and capability use survive the session recorder: record, replay, the same events."""

from __future__ import annotations

from pathlib import Path

from adaptor_nb import Agent, CapabilityEnd, CapabilityStart, Event, PlanItem, PlanUpdate
from adaptor_nb.drivers.reference import Config, Driver, Emit, Turn, scenario
from adaptor_nb.recorder import ExposurePolicy, SessionRecorder, replay

SCRIPT = scenario(
    Turn(
        Emit(
            PlanUpdate(
                items=(PlanItem("read the data", "in_progress", priority="high", id="1"), PlanItem("plot it")),
                source="test.plan",
                explanation="two steps",
            )
        ),
        Emit(CapabilityStart(kind="mcp_tool", name="docs/search", scope="m1", input={"q": ["a", 1, None]})),
        Emit(CapabilityEnd(kind="mcp_tool", name="docs/search", scope="m1", output={"content": [{"text": "x"}]})),
        Emit(PlanUpdate(items=(PlanItem("read the data", "done"), PlanItem("plot it", "in_progress")))),
        Emit(CapabilityStart(kind="subagent", name="Task", scope="t1", input={"description": "look"})),
        "answer",
    )
)


async def test_plans_and_capabilities_replay_equal_to_the_live_events(tmp_path: Path) -> None:
    agent = Agent(Driver(Config(scenario=SCRIPT)))
    try:
        rec = SessionRecorder(tmp_path / "s.jsonl", exposure=ExposurePolicy(include_transcript=True))
        live: list[Event] = []
        async for event in agent.send("go").events():
            live.append(event)
            rec.record(event)
    finally:
        await agent.close()
    wanted = (PlanUpdate, CapabilityStart, CapabilityEnd)
    kept = [e for e in live if isinstance(e, wanted)]
    again = [e for e in replay(tmp_path / "s.jsonl") if isinstance(e, wanted)]
    assert len(kept) == 6  # two plans, two starts, the driver's end and the core's end of the open subagent
    assert again == kept
    assert [e.meta for e in again] == [e.meta for e in kept]
    plans = [e for e in again if isinstance(e, PlanUpdate)]
    assert [p.revision for p in plans] == [1, 2]
    assert plans[1].items[0] == PlanItem("read the data", "completed", raw_status="done")
    assert isinstance(plans[0].items[0], PlanItem) and plans[0].items[0].priority == "high"
    closed = [e for e in again if isinstance(e, CapabilityEnd) and not e.ok]
    assert [c.scope for c in closed] == ["t1"]
