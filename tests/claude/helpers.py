"""Small helpers shared by the Claude driver tests."""

from __future__ import annotations

from typing import Any, TypeVar

from adaptor_nb import AdaptorError, Event, Result

E = TypeVar("E", bound=Event)


async def drain(stream: Any) -> tuple[list[Event], Result | None, BaseException | None]:
    """All events of a stream, then its result or error."""
    events = [ev async for ev in stream.events()]
    try:
        return events, await stream.result(), None
    except AdaptorError as exc:
        return events, None, exc


def of(events: list[Event], kind: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]


async def outcome(stream: Any) -> tuple[Result | None, BaseException | None]:
    """The result or error of a stream whose events were already consumed."""
    try:
        return await stream.result(), None
    except AdaptorError as exc:
        return None, exc
