"""A Stream drained by the bridge (its creator), shown to every AG-UI run that attaches to it.

The pump task reads ``Stream.events()`` to the end whether or not any client listens, so a client that disconnects
does not stop the run. Each AG-UI run is a ``Subscription``: it sees the Stream's events from the moment it attached
(with START events for whatever was already open) until the Stream ends or an approval becomes pending, when it ends
with an interrupt while the Stream waits for the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from ag_ui.core import (
    BaseEvent,
    Message,
    MessagesSnapshotEvent,
    ReasoningEndEvent,
    ReasoningMessageEndEvent,
    TextMessageEndEvent,
    ToolCallEndEvent,
)

from ..._approvals import ApprovalRequest
from ..._events import Done, Event, Notice
from ..._stream import Stream
from . import _runframe as frame
from ._mapping import EventMapper, now_ms, stamped

log = logging.getLogger("adaptor_nb.bridges.agui")
_INTERRUPT = "interrupt"
_DONE = "done"
Item = tuple[str, Any]  # ("events", list[BaseEvent]) | ("interrupt", None) | ("done", Done)


class LiveRun:
    """One Stream being drained; ``subscribe`` opens an AG-UI run over it."""

    def __init__(
        self,
        stream: Stream,
        key: str,
        on_end: Callable[[LiveRun], None],
        on_event: Callable[[str, Event], None] | None = None,
    ) -> None:
        self.stream = stream
        self.key = key
        self.mapper = EventMapper(stream.run_id)
        self.message_ids: set[str] = set()  # AG-UI user messages already given to this Stream
        self.done: Done | None = None
        self._pending: dict[str, ApprovalRequest] = {}
        self._answered: dict[str, ApprovalRequest] = {}
        self._subscribers: list[asyncio.Queue[Item]] = []
        self._on_end = on_end
        self._on_event = on_event
        self._task: asyncio.Task[None] | None = None
        self._waiters: list[asyncio.Future[None]] = []

    @property
    def subscribers(self) -> int:
        """How many AG-UI runs show this Stream now."""
        return len(self._subscribers)

    def admitted(self, message_id: str) -> None:
        """Note an AG-UI user message given to this Stream (a later input repeating it is a reconnect)."""
        self.message_ids.add(message_id)
        self._changed()

    async def until(self, predicate: Callable[[], bool]) -> None:
        """Return once ``predicate()`` holds; it is checked whenever subscriptions or admitted messages change."""
        while not predicate():
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter

    def _changed(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._pump(), name=f"agui-pump-{self.stream.run_id}")

    async def wait(self) -> None:
        """Return once the Stream has been drained to its end."""
        if self._task is not None:
            with contextlib.suppress(BaseException):
                await asyncio.shield(self._task)

    def pending(self) -> list[ApprovalRequest]:
        """The approval requests of this Stream still waiting for an answer (from anyone)."""
        self._remember_answers()
        return list(self._pending.values())

    def request(self, interrupt_id: str) -> ApprovalRequest | None:
        """The request behind an interrupt id, whatever its state, or None when this Stream never raised it."""
        return self._pending.get(interrupt_id) or self._answered.get(interrupt_id)

    def _broadcast(self, item: Item) -> None:
        for queue in self._subscribers:
            queue.put_nowait(item)

    async def _pump(self) -> None:
        mapper = self.mapper
        try:
            async for ev in self.stream.events():
                if self._on_event is not None:
                    self._observe(ev)
                if isinstance(ev, ApprovalRequest):
                    if ev.state == "pending":
                        self._pending[ev.id] = ev
                        closing = mapper.close()
                        if closing:
                            self._broadcast(("events", closing))
                        self._broadcast((_INTERRUPT, None))
                    continue
                if isinstance(ev, Done):
                    self.done = ev
                    self._broadcast(("events", mapper.close()))
                    self._broadcast((_DONE, ev))
                    break
                if isinstance(ev, Notice) and ev.kind == "approval.resolved":
                    self._remember_answers()
                mapped = mapper.map(ev)
                if mapped:
                    self._broadcast(("events", mapped))
        finally:
            self._remember_answers()
            self._on_end(self)

    def _observe(self, ev: Event) -> None:
        assert self._on_event is not None
        try:
            self._on_event(self.key, ev)
        except Exception as exc:  # an observer's failure must not stop the run or the clients
            log.warning("the AG-UI bridge's on_event observer failed: %r", exc)

    def _remember_answers(self) -> None:
        for rid, req in list(self._pending.items()):
            if req.state != "pending":
                self._answered[rid] = req
                del self._pending[rid]

    def subscribe(self) -> Subscription:
        """Attach an AG-UI run now: it receives every event published from here on."""
        queue: asyncio.Queue[Item] = asyncio.Queue()
        self._subscribers.append(queue)
        self._changed()
        return Subscription(self, queue, self.mapper.opening())

    def unsubscribe(self, queue: asyncio.Queue[Item]) -> None:
        with contextlib.suppress(ValueError):
            self._subscribers.remove(queue)
            self._changed()


class Subscription:
    """One AG-UI run over a LiveRun: ``events()`` yields it whole, RUN_STARTED to its terminal event."""

    def __init__(self, live: LiveRun, queue: asyncio.Queue[Item], opening: list[BaseEvent]) -> None:
        self._live = live
        self._queue = queue
        self._opening = opening

    def close(self) -> None:
        self._live.unsubscribe(self._queue)

    async def events(self, thread_id: str, run_id: str, history: Sequence[Message] = ()) -> AsyncIterator[BaseEvent]:
        live = self._live
        balance = Balance()
        try:
            yield frame.started(thread_id, run_id)
            if history:
                # The client's own conversation, echoed: it changes nothing for the client and tells any reader of
                # this run alone which earlier tool calls a TOOL_CALL_RESULT may answer.
                yield MessagesSnapshotEvent(messages=list(history), timestamp=now_ms())
            yield live.mapper.snapshot()
            for ev in self._opening:
                yield balance.see(ev)
            while True:
                if live.done is not None and self._queue.empty():
                    for ev in balance.close():
                        yield ev
                    yield frame.finished(thread_id, run_id, live.done)
                    return
                waiting = live.pending()
                if waiting and self._queue.empty():
                    for ev in balance.close():
                        yield ev
                    yield frame.interrupted(thread_id, run_id, waiting)
                    return
                kind, payload = await self._queue.get()
                if kind == "events":
                    for ev in payload:
                        yield balance.see(ev)
                elif kind == _DONE:
                    for ev in balance.close():
                        yield ev
                    yield frame.finished(thread_id, run_id, payload)
                    return
                # an interrupt marker: the loop head ends the run if the request is still pending
        finally:
            self.close()


class Balance:
    """What one AG-UI run has opened and not closed, so it can close it before its terminal event."""

    def __init__(self) -> None:
        self._open: dict[tuple[str, str], BaseEvent] = {}

    def see(self, ev: BaseEvent) -> BaseEvent:
        t = ev.type.value
        if t == "TEXT_MESSAGE_START":
            self._open["text", ev.message_id] = ev  # type: ignore[attr-defined]
        elif t == "TEXT_MESSAGE_END":
            self._open.pop(("text", ev.message_id), None)  # type: ignore[attr-defined]
        elif t == "REASONING_START":
            self._open["reasoning", ev.message_id] = ev  # type: ignore[attr-defined]
        elif t == "REASONING_END":
            self._open.pop(("reasoning", ev.message_id), None)  # type: ignore[attr-defined]
        elif t == "TOOL_CALL_START":
            self._open["tool", ev.tool_call_id] = ev  # type: ignore[attr-defined]
        elif t in ("TOOL_CALL_END", "TOOL_CALL_RESULT"):
            self._open.pop(("tool", ev.tool_call_id), None)  # type: ignore[attr-defined]
        return ev

    def close(self) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        for kind, ident in self._open:
            if kind == "text":
                out.append(TextMessageEndEvent(message_id=ident))
            elif kind == "reasoning":
                out += [ReasoningMessageEndEvent(message_id=ident), ReasoningEndEvent(message_id=ident)]
            else:
                out.append(ToolCallEndEvent(tool_call_id=ident))
        self._open.clear()
        return stamped(out)
