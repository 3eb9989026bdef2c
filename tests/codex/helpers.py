"""Small helpers shared by the Codex end-to-end tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from _support import alive, of
from _support import drain as run_all

from adaptor_nb import AdaptorError, Agent, Event, ProcessInfo, ProcessKind, Result, Stream

__all__ = ["Watcher", "alive", "closed", "of", "run_all", "spawned_pids", "summary"]


def spawned_pids(events: list[Event]) -> list[int]:
    return [int(e.data["pid"]) for e in of(events, ProcessInfo) if e.kind is ProcessKind.SPAWN]


async def closed(agent: Agent) -> None:
    await agent.close()


def summary(events: list[Event]) -> list[str]:
    """Event kinds with their phase, for readable order assertions."""
    out: list[str] = []
    for e in events:
        phase: Any = getattr(e, "phase", None)
        out.append(type(e).__name__ + (f".{phase.name}" if phase is not None else ""))
    return out


class Watcher:
    """Consumes a stream's events in the background so a test can wait for a particular one."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self.events: list[Event] = []
        self._changed = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._consume())

    async def _consume(self) -> None:
        async for ev in self.stream.events():
            self.events.append(ev)
            self._changed.set()
        self._changed.set()

    async def wait_for(self, predicate: Callable[[Event], bool], timeout: float = 30.0) -> Event:
        """The first event (seen so far or arriving later) that matches ``predicate``."""

        async def scan() -> Event:
            seen = 0
            while True:
                for ev in self.events[seen:]:
                    if predicate(ev):
                        return ev
                seen = len(self.events)
                if self._task.done():
                    raise AssertionError(f"the stream ended without a matching event: {summary(self.events)}")
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(scan(), timeout)

    async def finish(self) -> tuple[list[Event], Result | None, BaseException | None]:
        await self._task
        try:
            return self.events, await self.stream.result(), None
        except AdaptorError as exc:
            return self.events, None, exc
