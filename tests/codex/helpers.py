"""Small helpers shared by the Codex end-to-end tests."""

from __future__ import annotations

from typing import Any, TypeVar

import psutil

from adaptor_nb import Agent, ProcessInfo, ProcessKind, Result, RunError, Stream
from adaptor_nb._events import Event

E = TypeVar("E", bound=Event)


async def run_all(stream: Stream) -> tuple[list[Event], Result | None, BaseException | None]:
    """Consume every event, then return them with the result or the error."""
    events = [ev async for ev in stream.events()]
    try:
        return events, await stream.result(), None
    except RunError as exc:
        return events, None, exc


def of(events: list[Event], kind: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]


def spawned_pids(events: list[Event]) -> list[int]:
    return [int(e.data["pid"]) for e in of(events, ProcessInfo) if e.kind is ProcessKind.SPAWN]


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


async def closed(agent: Agent) -> None:
    await agent.close()


def summary(events: list[Event]) -> list[str]:
    """Event kinds with their phase, for readable order assertions."""
    out: list[str] = []
    for e in events:
        phase: Any = getattr(e, "phase", None)
        out.append(type(e).__name__ + (f".{phase.name}" if phase is not None else ""))
    return out
