"""Small helpers shared by the core tests."""

from __future__ import annotations

from typing import Any

from adaptor_nb import Done, Event, Stream


async def collect(stream: Stream) -> list[Event]:
    """Every event of a stream, Done last."""
    return [ev async for ev in stream.events()]


async def outcome(stream: Stream) -> tuple[Any, BaseException | None]:
    """(result, error) the way Done reports it."""
    try:
        return await stream.result(), None
    except BaseException as exc:
        return None, exc


def of_type(events: list[Event], tp: type) -> list[Any]:
    return [e for e in events if isinstance(e, tp)]


def done_of(events: list[Event]) -> Done:
    assert isinstance(events[-1], Done)
    return events[-1]
