"""Stream: the handle of one run (events, result, supplemental messages, cancel)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Generator
from typing import TYPE_CHECKING, Any

from ._enums import Timing
from ._events import Done, Event
from ._policy import Author
from ._result import Result

if TYPE_CHECKING:
    from ._core._execution import Execution


class Stream:
    """One execution. ``run_id`` is known at once; ``await stream`` is ``await stream.result()``."""

    def __init__(self, execution: Execution) -> None:
        self._ex = execution

    def __repr__(self) -> str:
        state = "done" if self.done else "running"
        key = f", thread={self._ex.thread_key!r}" if self._ex.thread_key else ""
        return f"<Stream {self._ex.run_id} {state}{key}>"

    @property
    def run_id(self) -> str:
        return self._ex.run_id

    @property
    def thread_key(self) -> str:
        return self._ex.thread_key

    @property
    def done(self) -> bool:
        return self._ex.finished

    @property
    def descriptor(self) -> Any:
        return self._ex.desc

    def events(self) -> AsyncIterator[Event]:
        """The run's events, Done last. Single consumer: a second call raises RuntimeError."""
        return self._ex.broker.subscribe()

    def event_batches(self, *, merge_text: bool = False) -> AsyncIterator[list[Event]]:
        """``events()`` a buffer at a time: non-empty lists of the events ready so far, in order, Done last.

        For consumers that fold many small events (a live view of a long text stream): one resumption per batch
        instead of one per event. Same single consumer: either this or ``events()``, once. With ``merge_text``,
        consecutive TextDeltas of one message that are still unread arrive as one (the first's meta, all their
        text), so a reader that shows text handles one event per batch instead of one per token.
        """
        return self._ex.broker.subscribe_batches(merge_text=merge_text)

    async def result(self) -> Result:
        """The Result, or raise RunError (business failure, with ``.result``) / another AdaptorError. Repeatable."""
        return await self._ex.wait()

    def __await__(self) -> Generator[Any, None, Result]:
        return self.result().__await__()

    async def done_event(self) -> Done:
        """Wait for the end and return the Done event (exactly what result() returns or raises)."""
        try:
            await self._ex.wait()
        except BaseException:
            pass
        assert self._ex.done_event is not None
        return self._ex.done_event

    async def send(
        self, text: str, *, id: str | None = None, author: Author | None = None, when: Timing = Timing.SOON
    ) -> str:
        """Admit a supplemental message (admission, not delivery); returns its id. Raises MessageError."""
        loop = self._ex.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        coro = self._ex.queue.admit(text, id=id, author=author or Author(), timing=when)
        if running is loop:
            return await coro
        fut = asyncio.run_coroutine_threadsafe(coro, loop)
        return await asyncio.wrap_future(fut)

    def send_threadsafe(
        self, text: str, *, id: str | None = None, author: Author | None = None, when: Timing = Timing.SOON
    ) -> Any:
        """Schedule ``send`` from another thread; returns a concurrent.futures.Future of the message id."""
        coro = self._ex.queue.admit(text, id=id, author=author or Author(), timing=when)
        return asyncio.run_coroutine_threadsafe(coro, self._ex.loop)

    def cancel(self) -> None:
        """Cancel the run (idempotent, thread-safe). Drain events afterwards to see Done."""
        self._ex.cancel()
