"""``Stream.event_batches``: the run's events a buffer at a time, the same events in the same order as ``events()``."""

from __future__ import annotations

import pytest

from adaptor_nb import Agent, Done, Event, TextDelta
from adaptor_nb.drivers import reference as ref


def _scenario() -> ref.Scenario:
    return ref.scenario(ref.Turn(ref.Text("x" * 4000, chunk=1), ref.ThinkingStep("hm"), "and more"))


def _shape(events: list[Event]) -> list[tuple[str, str]]:
    return [(type(e).__name__, e.text if isinstance(e, TextDelta) else "") for e in events]


async def test_batches_hold_the_same_events_in_order_done_last() -> None:
    one = [e async for e in Agent(ref.Driver(scenario=_scenario())).send("go").events()]
    batches = [b async for b in Agent(ref.Driver(scenario=_scenario())).send("go").event_batches()]
    flat = [e for b in batches for e in b]
    assert all(batches)
    assert _shape(flat) == _shape(one)
    seqs = [e.meta.sequence for e in flat]
    assert seqs == sorted(seqs)
    assert isinstance(flat[-1], Done) and not any(isinstance(e, Done) for e in flat[:-1])


async def test_a_fast_producer_is_read_many_events_at_a_time() -> None:
    batches = [b async for b in Agent(ref.Driver(scenario=_scenario())).send("go").event_batches()]
    assert max(len(b) for b in batches) > 1
    assert len(batches) < sum(len(b) for b in batches) // 8


async def test_batches_and_events_share_the_single_consumer() -> None:
    stream = Agent(ref.Driver()).send("hi")
    batches = stream.event_batches()
    with pytest.raises(RuntimeError):
        stream.events()
    assert [e async for b in batches for e in b][-1] == await stream.done_event()


async def test_batches_after_the_end_keep_done_last() -> None:
    stream = Agent(ref.Driver()).send("hi")
    await stream.done_event()
    flat = [e async for b in stream.event_batches() for e in b]
    assert isinstance(flat[-1], Done)
