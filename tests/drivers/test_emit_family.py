"""RunContext's one emit family: ``emit`` and ``emit_many`` (with ``TextDeltas``) give the consumer the same events.

A driver that publishes a block of text deltas as ``TextDeltas`` and one that emits each ``TextDelta`` in turn are
indistinguishable to a reader, fast or slow (a small buffer forces hand-overs in the middle of the block).
"""

from __future__ import annotations

import asyncio

import pytest

from adaptor_nb import Agent
from adaptor_nb.driver import (
    Descriptor,
    DriverOutcome,
    Event,
    EventMeta,
    EventSourceMeta,
    Invocation,
    Phase,
    RunContext,
    TextDelta,
    TextDeltas,
    Usage,
)

TEXTS = [f"t{i} " for i in range(200)]


class _Texts:
    """Publishes TEXTS as one message, either as one TextDeltas block or one emit per delta."""

    def __init__(self, batched: bool) -> None:
        self.batched = batched

    @property
    def name(self) -> str:
        return "texts"

    def descriptor(self) -> Descriptor:
        return Descriptor(name="texts", provider="test")

    def validate_config(self) -> None:
        return None

    def config_fingerprint(self) -> str:
        return "texts"

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        meta = EventMeta(source=EventSourceMeta(thread_id="s-1"))
        await ctx.emit(TextDelta(message_id="m1", phase=Phase.START))
        if self.batched:
            await ctx.emit_many(TextDeltas(TEXTS[:100], "m1", meta))
            await ctx.emit_many([TextDeltas(TEXTS[100:], "m1", meta)[i] for i in range(100)])
        else:
            for text in TEXTS:
                await ctx.emit(TextDelta(text=text, message_id="m1", meta=meta))
        await ctx.emit(TextDelta(message_id="m1", phase=Phase.END))
        await ctx.turn_end(usage=Usage(input_tokens=1, output_tokens=1), text="".join(TEXTS))
        return DriverOutcome(text="".join(TEXTS), model="m", provider="test", session_id="s-1")


async def _read(batched: bool, slow: bool) -> tuple[list[tuple[str, str, str, str | None]], str]:
    stream = Agent(_Texts(batched), event_buffer=8).send("go")
    seen: list[Event] = []
    async for ev in stream.events():
        seen.append(ev)
        if slow:
            await asyncio.sleep(0)
    result = await stream.result()
    texts = [
        (type(e).__name__, e.text, e.phase.value, e.meta.source.thread_id if e.meta.source else None)
        for e in seen
        if isinstance(e, TextDelta)
    ]
    return texts, result.text or ""


@pytest.mark.parametrize("slow", [False, True])
async def test_a_block_of_text_deltas_reads_as_the_same_events_one_by_one(slow: bool) -> None:
    batched, batched_text = await _read(True, slow)
    single, single_text = await _read(False, slow)
    assert batched == single
    assert [t for _, t, phase, _ in batched if phase == Phase.CONTENT.value] == TEXTS
    assert batched_text == single_text == "".join(TEXTS)


def test_text_deltas_read_as_the_events_they_stand_for() -> None:
    meta = EventMeta(source=EventSourceMeta(thread_id="s-2"))
    run = TextDeltas(["a", "b"], "m2", meta)
    assert len(run) == 2
    assert list(run) == [
        TextDelta(text="a", message_id="m2", meta=meta),
        TextDelta(text="b", message_id="m2", meta=meta),
    ]
    assert list(run[1:]) == [run[1]]
