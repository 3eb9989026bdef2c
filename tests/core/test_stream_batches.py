"""``Stream.event_batches``: the run's events a buffer at a time, the same events in the same order as ``events()``."""

from __future__ import annotations

import asyncio

import pytest
from _support import StubDriver

from adaptor_nb import Agent, Done, Event, EventMeta, EventSourceMeta, TextDelta, Thinking
from adaptor_nb.driver import DriverOutcome, Invocation, RunContext, TextDeltas
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


class _Mixed(StubDriver):
    """Text of two messages around a thinking step, through ``emit`` and ``emit_many``, without awaiting in between."""

    name = "mixed"

    def __init__(self) -> None:
        self.first = TextDelta(text="a", message_id="m1")

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        await ctx.emit(self.first)
        for ch in "bcd":
            await ctx.emit(TextDelta(text=ch, message_id="m1"))
        await ctx.emit_many(TextDeltas(["e", "f"], "m1"))
        await ctx.emit(TextDelta(text="X", message_id="m2"))
        await ctx.emit(Thinking(text="hm", message_id="m2"))
        await ctx.emit_many(TextDeltas(["g", "h"], "m2"))
        await ctx.emit(TextDelta(text="i", message_id="m2"))
        await asyncio.sleep(0)  # the reader takes what is buffered: the text after this starts a new delta
        await ctx.emit_many(TextDeltas(["j", "k"], "m2"))
        await ctx.turn_end(text="abcdefXghijk")
        return DriverOutcome(text="abcdefXghijk")


async def test_merged_text_arrives_as_one_delta_per_message_and_batch() -> None:
    driver = _Mixed()
    stream = Agent(driver).send("go")
    batches = [b async for b in stream.event_batches(merge_text=True)]
    flat = [e for b in batches for e in b]
    texts = [(e.message_id, e.text) for e in flat if isinstance(e, TextDelta)]
    assert texts == [("m1", "abcdef"), ("m2", "X"), ("m2", "ghi"), ("m2", "jk")]
    kinds = [type(e).__name__ for e in flat]
    assert kinds.index("Thinking") == kinds.index("TextDelta") + 2  # order around other events is kept
    seqs = [e.meta.sequence for e in flat]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # merged deltas leave no gap that reads as a loss
    assert driver.first.text == "a"  # the driver's own event object is not changed
    assert (await stream.result()).text == "abcdefXghijk"


async def test_merged_text_of_a_long_stream_is_all_there_in_few_events() -> None:
    one = [e async for e in Agent(ref.Driver(scenario=_scenario())).send("go").events()]
    stream = Agent(ref.Driver(scenario=_scenario())).send("go")
    merged = [e async for b in stream.event_batches(merge_text=True) for e in b]
    assert "".join(e.text for e in merged if isinstance(e, TextDelta)) == "".join(
        e.text for e in one if isinstance(e, TextDelta)
    )
    assert sum(isinstance(e, TextDelta) for e in merged) * 20 < sum(isinstance(e, TextDelta) for e in one)


class _Busy(_Mixed):
    """5,000 deltas through ``emit`` and 5,000 through ``emit_many``, never awaiting anything else."""

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        for i in range(5000):
            # Provider coordinates of each line, as the Cursor driver gives them: they do not keep deltas apart.
            meta = EventMeta(source=EventSourceMeta(thread_id="s1", sequence=i))
            await ctx.emit(TextDelta(text=f"{i} ", message_id="m1", meta=meta))
        await ctx.emit_many(TextDeltas([f"{i} " for i in range(5000, 10000)], "m1"))
        text = "".join(f"{i} " for i in range(10000))
        await ctx.turn_end(text=text)
        return DriverOutcome(text=text)


async def test_a_producer_that_never_waits_still_lets_the_merged_reader_show_text_as_it_comes() -> None:
    stream = Agent(_Busy()).send("go")
    batches = [b async for b in stream.event_batches(merge_text=True)]
    texts = [e.text for b in batches for e in b if isinstance(e, TextDelta)]
    assert "".join(texts) == (await stream.result()).text
    assert 8 <= len(texts) <= 40  # handed over about every thousand deltas, not only at the end
