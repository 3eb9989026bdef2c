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
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from ag_ui.core import BaseEvent, Message, MessagesSnapshotEvent

from ..._approvals import ApprovalRequest
from ..._enums import Phase, Role
from ..._events import Done, Event, Notice, TextDelta, Thinking, ToolCall
from ..._stream import Stream
from . import _runframe as frame
from ._mapping import DELTA_EVENTS, EventMapper, delta_event, now_ms

log = logging.getLogger("adaptor_nb.bridges.agui")
_EVENTS = "events"
_INTERRUPT = "interrupt"
_DONE = "done"
# What a sink holds: a delta ("text" | "reasoning" | "args", message or tool call id, text), mapped events
# ("events", [BaseEvent, ...], None), or a marker ("interrupt" | "done", None, None).
Item = tuple[str, Any, Any]
_INTERRUPT_ITEM: Item = (_INTERRUPT, None, None)
_BUSY = 48  # unread items at a wake-up that mark a producer outrunning this client
_CONTENT = Phase.CONTENT
_ASSISTANT = Role.ASSISTANT
_DONE_ITEM: Item = (_DONE, None, None)


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
        self._sinks: list[_Sink] = []
        self._on_end = on_end
        self._on_event = on_event
        self._task: asyncio.Task[None] | None = None
        self._waiters: list[asyncio.Future[None]] = []

    @property
    def subscribers(self) -> int:
        """How many AG-UI runs show this Stream now."""
        return len(self._sinks)

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
        for sink in self._sinks:
            sink.put(item)

    async def _pump(self) -> None:
        mapper = self.mapper
        delta = mapper.delta
        open_text = mapper.open_text  # the live dict: message id -> AG-UI message id
        sinks = self._sinks
        observe = self._observe if self._on_event is not None else None
        try:
            async for ev in self.stream.events():
                if observe is not None:
                    observe(ev)
                tp = type(ev)
                if tp is TextDelta:
                    # The hot path: assistant text for an open message becomes a small tuple for each client.
                    text = ev.text  # type: ignore[attr-defined]
                    mid = open_text.get(ev.message_id) if text else None  # type: ignore[attr-defined]
                    if mid is not None and ev.phase is _CONTENT and ev.role is _ASSISTANT:  # type: ignore[attr-defined]
                        item = ("text", mid, text)
                        for sink in sinks:
                            sink.items.append(item)
                            if sink.waiter is not None:
                                sink.wake()
                        continue
                elif tp is Thinking or tp is ToolCall:
                    found = delta(ev)  # type: ignore[arg-type]
                    if found is not None:
                        for sink in sinks:
                            sink.put(found)
                        continue
                if isinstance(ev, ApprovalRequest):
                    if ev.state == "pending":
                        self._pending[ev.id] = ev
                        closing = mapper.close()
                        if closing:
                            self._broadcast((_EVENTS, closing, None))
                        self._broadcast(_INTERRUPT_ITEM)
                    continue
                if isinstance(ev, Done):
                    self.done = ev
                    self._broadcast((_EVENTS, mapper.close(), None))
                    self._broadcast(_DONE_ITEM)
                    break
                if isinstance(ev, Notice) and ev.kind == "approval.resolved":
                    self._remember_answers()
                mapped = mapper.map(ev)
                if mapped:
                    self._broadcast((_EVENTS, mapped, None))
        finally:
            if self.done is None:  # the pump itself failed or was cancelled: its clients must not wait forever
                self.done = Done(err=RuntimeError("the AG-UI bridge stopped following this run"))
                self._broadcast((_EVENTS, mapper.close(), None))
                self._broadcast(_DONE_ITEM)
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
        sink = _Sink()
        self._sinks.append(sink)
        self._changed()
        return Subscription(self, sink, self.mapper.opening())

    def unsubscribe(self, sink: _Sink) -> None:
        with contextlib.suppress(ValueError):
            self._sinks.remove(sink)
            self._changed()


class _Sink:
    """What one AG-UI run has not read yet: a deque and a wake-up (cheaper per event than an asyncio.Queue)."""

    __slots__ = ("items", "waiter")

    def __init__(self) -> None:
        self.items: deque[Item] = deque()
        self.waiter: asyncio.Future[None] | None = None

    def put(self, item: Item) -> None:
        self.items.append(item)
        if self.waiter is not None:
            self.wake()

    def wake(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self) -> None:
        if not self.items:
            waiter = self.waiter = asyncio.get_running_loop().create_future()
            await waiter


class Subscription:
    """One AG-UI run over a LiveRun: ``frames()`` yields it whole, RUN_STARTED to its terminal event, as batches of
    JSON texts (one batch per wake-up: everything the run published since the last one)."""

    def __init__(self, live: LiveRun, sink: _Sink, opening: list[BaseEvent]) -> None:
        self._live = live
        self._sink = sink
        self._opening = opening

    def close(self) -> None:
        self._live.unsubscribe(self._sink)

    async def frames(self, thread_id: str, run_id: str, history: Sequence[Message] = ()) -> AsyncIterator[list[str]]:
        live = self._live
        sink = self._sink
        try:
            first: list[BaseEvent] = [frame.started(thread_id, run_id)]
            if history:
                # The client's own conversation, echoed: it changes nothing for the client and tells any reader of
                # this run alone which earlier tool calls a TOOL_CALL_RESULT may answer.
                first.append(MessagesSnapshotEvent(messages=list(history), timestamp=now_ms()))
            first.append(live.mapper.snapshot())
            first += self._opening
            yield [encode(ev) for ev in first]
            while True:
                if not sink.items:
                    end = self._end(thread_id, run_id)
                    if end is not None:
                        yield end
                        return
                    await sink.wait()
                if len(sink.items) >= _BUSY:
                    # A fast producer: give it one more turn, so this client gets fewer, larger writes.
                    await asyncio.sleep(0)
                batch, stop = render(sink.items, live)
                if stop is not None:
                    batch += self._terminal(thread_id, run_id, stop)
                    yield batch
                    return
                if batch:
                    yield batch
        finally:
            self.close()

    def _end(self, thread_id: str, run_id: str) -> list[str] | None:
        """The closing batch when the run is over or waits for answers (checked with nothing left to read)."""
        live = self._live
        if live.done is not None:
            return self._terminal(thread_id, run_id, _DONE)
        if live.pending():
            return self._terminal(thread_id, run_id, _INTERRUPT)
        return None

    def _terminal(self, thread_id: str, run_id: str, why: str) -> list[str]:
        live = self._live
        out = [encode(ev) for ev in live.mapper.ending()]
        if why == _DONE:
            assert live.done is not None
            out.append(encode(frame.finished(thread_id, run_id, live.done)))
        else:
            out.append(encode(frame.interrupted(thread_id, run_id, live.pending())))
        return out


def encode(event: BaseEvent) -> str:
    """One event as JSON text, as the protocol's own models write it."""
    return event.model_dump_json(by_alias=True)


def render(items: deque[Item], live: LiveRun) -> tuple[list[str], str | None]:
    """Take everything in ``items`` as JSON texts, merging consecutive deltas of one message (or tool call) into one
    event; stop at the Stream's end, or at an interrupt that is still pending (``live.pending()``)."""
    out: list[str] = []
    kind = ident = ""
    parts: list[str] = []
    stop: str | None = None
    while items:
        item = items.popleft()
        tag = item[0]
        if tag in DELTA_EVENTS:
            if tag == kind and item[1] == ident:
                parts.append(item[2])
                continue
            if parts:
                out.append(encode(delta_event(kind, ident, "".join(parts))))
            kind, ident, parts = tag, item[1], [item[2]]
            continue
        if parts:
            out.append(encode(delta_event(kind, ident, "".join(parts))))
            kind, parts = "", []
        if tag == _EVENTS:
            out += [encode(ev) for ev in item[1]]
        elif tag == _DONE:
            stop = _DONE
            break
        elif tag == _INTERRUPT and live.pending():
            stop = _INTERRUPT
            break
    if parts:
        out.append(encode(delta_event(kind, ident, "".join(parts))))
    if stop is not None:
        items.clear()
    return out, stop
