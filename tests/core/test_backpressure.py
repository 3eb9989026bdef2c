import asyncio

import pytest

from adaptor_nb import Agent, Done, Dropped, Phase, Role, TextDelta, ToolCall, ToolResult, TurnEnd
from adaptor_nb.drivers import reference as ref

from .helpers import collect, of_type


async def test_full_buffer_drops_only_content_deltas_and_reports_them() -> None:
    gate = ref.Gate()
    steps = (ref.Text("x" * 400, chunk=1), gate, ref.ToolUse("Bash", {"cmd": "ls"}, {"out": "ok"}))
    stream = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(*steps))), event_buffer=10).send("hi")
    it = stream.events()
    first = await it.__anext__()  # subscribed; now stop consuming until the driver reaches the gate
    await gate.reached.wait()
    gate.open()
    events = [first] + [e async for e in it]
    dropped = of_type(events, Dropped)
    assert dropped, "a drop report is expected"
    total = sum(d.count for d in dropped)
    deltas = [e for e in of_type(events, TextDelta) if e.text]
    assert len(deltas) + total >= 400 - 10
    for d in dropped:
        assert set(d.by_kind) <= {"TextDelta", "ToolCall", "ProcessInfo", "Thinking", "SubagentUpdate"}
        assert d.first_sequence <= d.last_sequence
    # critical events all arrive
    assert of_type(events, ToolResult) and of_type(events, TurnEnd) and isinstance(events[-1], Done)
    seqs = [e.meta.sequence for e in events]
    assert seqs == sorted(seqs)
    result = await stream.result()
    assert result.text == "x" * 400  # the result never depends on dropped events


async def test_one_dropped_event_per_drop_window() -> None:
    gate = ref.Gate()
    sc = ref.Scenario(ref.Turn(ref.Text("a" * 50, chunk=1), gate, ref.Text("b" * 5, chunk=1)))
    stream = Agent(ref.Driver(scenario=sc), event_buffer=5).send("hi")
    it = stream.events()
    first = await it.__anext__()
    await gate.reached.wait()
    gate.open()
    events = [first] + [e async for e in it]
    dropped = of_type(events, Dropped)
    assert len(dropped) == 1
    assert dropped[0].count == dropped[0].last_sequence - dropped[0].first_sequence + 1


@pytest.mark.parametrize("buffer", [1, 2, 4])
async def test_blocking_events_is_lossless(buffer: int) -> None:
    sc = ref.Scenario(ref.Turn(ref.Text("y" * 500, chunk=1)))
    stream = Agent(ref.Driver(scenario=sc), event_buffer=buffer, blocking_events=True).send("hi")
    events = []
    async for ev in stream.events():
        events.append(ev)
        await asyncio.sleep(0)
    assert not of_type(events, Dropped)
    assert "".join(e.text for e in of_type(events, TextDelta)) == "y" * 500


async def test_result_only_releases_blocked_producers_and_keeps_critical_events() -> None:
    sc = ref.Scenario(ref.Turn(ref.Text("z" * 300, chunk=1), ref.ToolUse("Read", {"p": "f"}, {"ok": True})))
    stream = Agent(ref.Driver(scenario=sc), event_buffer=4, blocking_events=True).send("hi")
    result = await asyncio.wait_for(stream.result(), 10)
    assert result.text == "z" * 300
    events = await collect(stream)
    assert of_type(events, ToolResult) and of_type(events, TurnEnd)
    assert not [e for e in of_type(events, TextDelta) if e.text]
    assert of_type(events, Dropped), "the loss is summarized"


async def test_tool_call_boundaries_are_never_dropped() -> None:
    sc = ref.Scenario(ref.Turn(*[ref.ToolUse("T", {"i": i}, {"r": i}) for i in range(30)]))
    gate_stream = Agent(ref.Driver(scenario=sc), event_buffer=2).send("hi")
    events = await collect(gate_stream)
    starts = [e for e in of_type(events, ToolCall) if e.phase.value == "start"]
    ends = [e for e in of_type(events, ToolCall) if e.phase.value == "end"]
    assert len(starts) == 30 and len(ends) == 30
    assert len(of_type(events, ToolResult)) == 30


async def test_text_on_the_fast_path_is_stamped_like_every_other_event() -> None:
    # The reference driver publishes text chunks with emit, which publishes within the call while the buffer has room
    # and waits when it is half full; the consumer must not be able to tell the two apart.
    gate = ref.Gate()
    sc = ref.Scenario(ref.Turn(ref.Text("abcdefghij" * 30, chunk=3), gate))
    stream = Agent(ref.Driver(scenario=sc), event_buffer=16).send("hi")
    it = stream.events()
    first = await it.__anext__()  # subscribed; now stop reading until the driver has written all the text
    await gate.reached.wait()
    gate.open()
    events = [first] + [e async for e in it]
    deltas = [e for e in of_type(events, TextDelta) if e.text]
    dropped = of_type(events, Dropped)
    assert dropped, "with 16 slots and nobody reading, some chunks are dropped"
    seqs = [e.meta.sequence for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    start = next(e for e in of_type(events, TextDelta) if e.phase is Phase.START)  # published with emit()
    for ev in deltas:
        assert ev.meta.run_id == first.meta.run_id and ev.meta.thread_key == first.meta.thread_key
        assert ev.meta.turn_id == start.meta.turn_id != "" and ev.meta.timestamp >= start.meta.timestamp
        assert ev.meta.source == start.meta.source
        assert ev.role is Role.ASSISTANT and ev.phase is Phase.CONTENT and ev.message_id.startswith("msg-")
    kept = sum(len(e.text) // 3 for e in deltas)
    assert kept + sum(d.count for d in dropped) == 100
    assert (await stream.result()).text == "abcdefghij" * 30
