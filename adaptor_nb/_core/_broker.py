"""The per-run event broker: stamps meta, buffers with backpressure, reports drops, keeps Done last."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from .._enums import Phase, Role
from .._events import (
    Done,
    Dropped,
    Event,
    EventMeta,
    EventSourceMeta,
    TextDelta,
    event_kind,
    is_droppable,
    with_meta,
)

_new = object.__new__
_YIELD_EVERY = 64
# A producer that folds text into an unread delta hands over to the consumer after this many folds (a folded delta
# costs no event, so this is about letting a reader show text while a producer that never awaits keeps going).
_FOLD_YIELD = 1024
_set = object.__setattr__
_now = time.time
_ASSISTANT = Role.ASSISTANT
_CONTENT = Phase.CONTENT


@dataclass
class _DropWindow:
    count: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    first: int = 0
    last: int = 0
    reason: str = ""

    def add(self, kind: str, seq: int, reason: str) -> None:
        if self.count == 0:
            self.first = seq
            self.reason = reason
        self.count += 1
        self.last = seq
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1


def _same_origin(a: EventSourceMeta | None, b: EventSourceMeta | None) -> bool:
    """Whether two deltas come from the same provider run, thread and turn (their own sequence and time aside)."""
    if a is None or b is None:
        return a is b
    return a.run_id == b.run_id and a.thread_id == b.thread_id and a.turn_id == b.turn_id


class Broker:
    """One per run. Ordinary (droppable) events share a bounded buffer; critical events are never dropped.

    Modes: live consumption (bounded; drops or, with ``blocking``, waits), result-only (ordinary traffic is
    discarded with a loss summary, critical events kept for a later ``events()``), and closed (after Done).
    """

    def __init__(self, run_id: str, thread_key: str, capacity: int = 1024, blocking: bool = False) -> None:
        self.run_id = run_id
        self.thread_key = thread_key
        self.capacity = capacity
        self.blocking = blocking
        self.turn_id = ""
        self._seq = 0
        self._items: deque[Event] = deque()
        self._flags: deque[bool] = deque()  # parallel to _items: counted in the ordinary buffer
        self._ordinary = 0
        self._window = _DropWindow()
        self._subscribed = False
        self._result_only = False
        self._discarding = False
        self._closed = False
        self._wake = asyncio.Event()
        self._sleeping = False  # the consumer waits on _wake (producers set it only then)
        self._fast = True  # publish_nowait/push_text may skip the full publish (no drop window, not discarding...)
        self._space = asyncio.Event()
        self._space.set()
        self._subscribe_waiters: list[asyncio.Future[bool]] = []
        # A batch consumer that asked for merged text: the last buffered TextDelta (while unread) takes the text of
        # the deltas that follow it, when they continue the same message; ``_parts`` holds that text until read.
        self._merge = False
        self._open: TextDelta | None = None
        self._parts: list[str] | None = None
        self._folds = 0  # folds since the consumer last read
        self.published = 0
        self.dropped = 0
        # The producer hands over to a live consumer after this many unread events (at most half the buffer): a
        # per-token event is then read, and freed, while still young, which keeps the cyclic collector's passes
        # few and short (measured: a 100,000-delta run made ~350 young and 3 full passes at 512, ~100 and 0-1 at 64).
        self._yield_at = max(1, min(capacity // 2, _YIELD_EVERY))

    # -- state -------------------------------------------------------------------------------------------

    @property
    def subscribed(self) -> bool:
        return self._subscribed

    @property
    def result_only(self) -> bool:
        return self._result_only and not self._subscribed

    @property
    def closed(self) -> bool:
        return self._closed

    def _stamp(self, event: Event, source: EventSourceMeta | None) -> Event:
        self._seq = seq = self._seq + 1
        # EventMeta is frozen; building its dict directly skips the dataclass __init__ on this hot path.
        meta = _new(EventMeta)
        _set(
            meta,
            "__dict__",
            {
                "run_id": self.run_id,
                "thread_key": self.thread_key,
                "sequence": seq,
                "timestamp": _now(),
                "turn_id": self.turn_id,
                "source": source if source is not None else event.meta.source,
            },
        )
        if event.meta.sequence == 0:
            # A fresh payload from a driver (no meta, or only its source coordinates): nobody else holds it as a
            # published event yet, so it is stamped in place.
            event.__dict__["meta"] = meta
            return event
        return with_meta(event, meta)  # an event that already went out (a replay) is copied

    def _flush_window(self) -> None:
        w = self._window
        if w.count == 0:
            return
        self._window = _DropWindow()
        self._refresh_fast()
        report = Dropped(
            count=w.count,
            by_kind=dict(w.by_kind),
            first_sequence=w.first,
            last_sequence=w.last,
            reason=w.reason,
            source="broker",
        )
        self._append(self._stamp(report, None), ordinary=False)

    def _append(self, event: Event, *, ordinary: bool) -> None:
        self._items.append(event)
        if self._merge:
            self._track(event)
        self._flags.append(ordinary)
        if ordinary:
            self._ordinary += 1
            if self._ordinary >= self.capacity:
                self._space.clear()
        self.published += 1
        if self._sleeping:
            self._sleeping = False
            self._wake.set()

    def _drop(self, event: Event, reason: str) -> None:
        if self._merge:
            self._track(None)  # text after a loss is not joined to the text before it
        self._seq += 1
        self.dropped += 1
        self._window.add(event_kind(event), self._seq, reason)
        self._fast = False

    def _track(self, appended: Event | None) -> None:
        """After an append (or a loss): the open delta takes no more text, and ``appended`` opens if it is content
        text that later deltas may join (a START or END delta, being critical, is never joined)."""
        if self._parts is not None:
            self._seal()
        if type(appended) is TextDelta and appended.phase is _CONTENT:
            self._open = appended
        else:
            self._open = None

    def _fold(self, text: str, message_id: str, role: Role, phase: Phase, source: EventSourceMeta | None) -> bool:
        """Join ``text`` to the unread TextDelta that ends the buffer, if it continues that delta's message."""
        last = self._open
        assert last is not None
        if last.message_id != message_id or last.role is not role or last.phase is not phase:
            return False
        had = last.meta.source
        if had is not source and not _same_origin(had, source):
            return False
        self._folds += 1
        parts = self._parts
        if parts is None:
            # The buffered event may be the driver's own object: the joined text goes into a copy the broker owns.
            own = _new(TextDelta)
            _set(own, "__dict__", dict(last.__dict__))
            self._items[-1] = self._open = own
            self._parts = [last.text, text]
        else:
            parts.append(text)
        return True

    def _seal(self) -> None:
        """The open delta takes no more text: it gets its joined text now."""
        assert self._open is not None and self._parts is not None
        self._open.__dict__["text"] = "".join(self._parts)
        self._parts = None
        self._open = None

    def _refresh_fast(self) -> None:
        self._fast = not (self._closed or self._discarding or self._result_only or self._window.count)

    # -- producers ---------------------------------------------------------------------------------------

    def publish_nowait(self, event: Event) -> bool:
        """The common case of ``publish`` without a coroutine: a droppable event with room to spare.

        Returns False (and does nothing) when the full ``publish`` is needed.
        """
        if self._open is not None and self._fast and type(event) is TextDelta:
            if self._folds >= _FOLD_YIELD:
                return False  # the full publish folds it and lets the consumer read
            if self._fold(event.text, event.message_id, event.role, event.phase, event.meta.source):
                return True
        if self._ordinary >= self._yield_at or not self._fast or not is_droppable(event):
            return False
        self._append(self._stamp(event, None), ordinary=True)
        return True

    def push_text(self, text: str, message_id: str, source: EventSourceMeta | None = None) -> bool:
        """``publish_nowait(TextDelta(text=text, message_id=message_id))`` for per-token loops.

        Plain assistant text is always droppable, so that check is skipped; returns False (having done nothing)
        when the full ``publish`` is needed, exactly when ``publish_nowait`` would.
        """
        if not self._fast:
            return False
        if self._open is not None:
            if self._folds >= _FOLD_YIELD:
                return False
            if self._fold(text, message_id, _ASSISTANT, _CONTENT, source):
                return True
        if self._ordinary >= self._yield_at:
            return False
        # The payload and its meta are built in one go: this runs once per streamed token.
        self._seq = seq = self._seq + 1
        meta = _new(EventMeta)
        _set(
            meta,
            "__dict__",
            {
                "run_id": self.run_id,
                "thread_key": self.thread_key,
                "sequence": seq,
                "timestamp": _now(),
                "turn_id": self.turn_id,
                "source": source,
            },
        )
        event = _new(TextDelta)
        _set(
            event,
            "__dict__",
            {"meta": meta, "text": text, "message_id": message_id, "role": _ASSISTANT, "phase": _CONTENT},
        )
        # ``_append(event, ordinary=True)``, written out: this is the one call per token that can be saved.
        self._items.append(event)
        if self._merge:
            self._track(event)
        self._flags.append(True)
        self._ordinary = ordinary = self._ordinary + 1
        if ordinary >= self.capacity:
            self._space.clear()
        self.published += 1
        if self._sleeping:
            self._sleeping = False
            self._wake.set()
        return True

    def push_texts(
        self, texts: Sequence[str], start: int, message_id: str, source: EventSourceMeta | None = None
    ) -> int:
        """``push_text`` for each of ``texts[start:]`` in turn, while it would succeed; returns the index it stopped at.

        For a block of deltas decoded together: one loop instead of one call per token. The deltas of one call share
        one clock reading (they arrived in the same read). Stops at the first item that is not a ``str``, so the
        caller's full ``publish`` path can reject it.
        """
        if not self._fast:
            return start
        if self._merge:
            return self._push_merged(texts, start, message_id, source)
        stop = min(len(texts), start + self._yield_at - self._ordinary)
        if stop <= start:
            return start
        items, flags = self._items, self._flags
        run_id, thread_key, turn_id, now = self.run_id, self.thread_key, self.turn_id, _now()
        seq = self._seq
        i = start
        while i < stop:
            text = texts[i]
            if type(text) is not str:
                break
            seq += 1
            meta = _new(EventMeta)
            _set(
                meta,
                "__dict__",
                {
                    "run_id": run_id,
                    "thread_key": thread_key,
                    "sequence": seq,
                    "timestamp": now,
                    "turn_id": turn_id,
                    "source": source,
                },
            )
            event = _new(TextDelta)
            _set(
                event,
                "__dict__",
                {"meta": meta, "text": text, "message_id": message_id, "role": _ASSISTANT, "phase": _CONTENT},
            )
            items.append(event)
            flags.append(True)
            i += 1
        n = i - start
        if n:
            self._seq = seq
            self._ordinary = ordinary = self._ordinary + n
            if ordinary >= self.capacity:
                self._space.clear()
            self.published += n
            if self._sleeping:
                self._sleeping = False
                self._wake.set()
        return i

    def _push_merged(self, texts: Sequence[str], start: int, message_id: str, source: EventSourceMeta | None) -> int:
        """``push_texts`` for a consumer of merged text: the block joins the open delta, or starts one.

        Stops (returning the index reached) where ``push_text`` would, and after ``_FOLD_YIELD`` folds, so the full
        ``publish`` lets the consumer read.
        """
        i, stop = start, len(texts)
        while i < stop and type(texts[i]) is str:
            if not self.push_text(texts[i], message_id, source):
                return i
            i += 1
            parts = self._parts
            if parts is not None:  # the open delta took that text: the rest of the block goes straight to it
                room = min(stop, i + _FOLD_YIELD - self._folds)
                first = i
                while i < room and type(texts[i]) is str:
                    parts.append(texts[i])
                    i += 1
                self._folds += i - first
        return i

    async def publish(self, event: Event, source: EventSourceMeta | None = None) -> Event | None:
        """Publish ``event``; returns the stamped event, or None if it was dropped."""
        if self._closed:
            return None
        if not is_droppable(event):
            return self.publish_critical(event, source)
        if self._discarding or (self._result_only and not self._subscribed):
            self._drop(event, "cancelled" if self._discarding else "result_only")
            return None
        if (
            self._open is not None
            and not self._window.count
            and type(event) is TextDelta
            and self._fold(event.text, event.message_id, event.role, event.phase, source or event.meta.source)
        ):
            folded = self._open
            if self._folds >= _FOLD_YIELD:
                await asyncio.sleep(0)  # let the consumer read what has gathered
            return folded
        if self._ordinary >= self.capacity:
            if self.blocking and self._subscribed:
                while self._ordinary >= self.capacity and not (self._discarding or self._closed or self.result_only):
                    await self._space.wait()
                if self._closed:
                    return None
                if self._discarding or self.result_only:
                    self._drop(event, "cancelled")
                    return None
            else:
                self._drop(event, "buffer_full")
                return None
        if self._window.count:
            self._flush_window()
        stamped = self._stamp(event, source)
        self._append(stamped, ordinary=True)
        if self._subscribed and self._ordinary >= self._yield_at:
            # Let the consumer catch up before the buffer fills, so a fast producer does not drop needlessly.
            await asyncio.sleep(0)
        return stamped

    def publish_critical(self, event: Event, source: EventSourceMeta | None = None) -> Event:
        """Publish a reliable event at once (never blocks, never drops)."""
        if self._closed:
            raise RuntimeError("broker is closed")
        self._flush_window()
        stamped = self._stamp(event, source)
        self._append(stamped, ordinary=False)
        return stamped

    def close(self, done: Done) -> Done:
        """Flush any drop report, publish Done last, and stop accepting events."""
        self._flush_window()
        stamped = self._stamp(done, None)
        self._append(stamped, ordinary=False)
        self._closed = True
        self._fast = False
        self._release()
        if not self._subscribed:
            self._prune_ordinary()
        return stamped  # type: ignore[return-value]

    # -- modes -------------------------------------------------------------------------------------------

    def _release(self) -> None:
        self._space.set()
        for fut in self._subscribe_waiters:
            if not fut.done():
                fut.set_result(self._subscribed)
        self._subscribe_waiters.clear()

    def _prune_ordinary(self) -> None:
        """Replace buffered ordinary events with one loss summary (Result-only or late subscription)."""
        if self._ordinary == 0:
            return
        kept: deque[Event] = deque()
        lost = _DropWindow()
        for ev, ordinary in zip(self._items, self._flags, strict=True):
            if ordinary:
                lost.add(event_kind(ev), ev.meta.sequence, "result_only")
            else:
                kept.append(ev)
        self._ordinary = 0
        self.dropped += lost.count
        summary = Dropped(
            count=lost.count,
            by_kind=lost.by_kind,
            first_sequence=lost.first,
            last_sequence=lost.last,
            reason="result_only",
            source="broker",
        )
        # The summary keeps the sequence of the first lost event so the log stays ordered.
        kept_list = list(kept)
        insert_at = next((i for i, e in enumerate(kept_list) if e.meta.sequence > lost.first), len(kept_list))
        first_meta = EventMeta(run_id=self.run_id, thread_key=self.thread_key, sequence=lost.first, timestamp=_now())
        kept_list.insert(insert_at, with_meta(summary, first_meta))
        self._items.clear()
        self._items.extend(kept_list)
        self._flags.clear()
        self._flags.extend(False for _ in kept_list)
        self._space.set()

    def result_requested(self) -> None:
        """``result()`` was awaited: without a subscriber, stop holding ordinary traffic."""
        self._result_only = True
        self._fast = False
        if not self._subscribed:
            self._prune_ordinary()
            self._release()

    def discard_ordinary(self) -> None:
        """Cancellation: release blocked producers; further ordinary traffic is summarized, not buffered."""
        self._discarding = True
        self._fast = False
        self._space.set()

    async def wait_for_subscriber(self) -> bool:
        """Wait until ``events()`` is called (True) or result-only mode/closure makes that moot (False)."""
        if self._subscribed:
            return True
        if self.result_only or self._closed:
            return False
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._subscribe_waiters.append(fut)
        return await fut

    # -- the consumer ------------------------------------------------------------------------------------

    def subscribe(self) -> AsyncIterator[Event]:
        """The single consumer's iterator; a second call raises RuntimeError."""
        self._claim()
        return self._iterate()

    def subscribe_batches(self, *, merge_text: bool = False) -> AsyncIterator[list[Event]]:
        """``subscribe`` that yields every buffered event at once (a non-empty list, in order, Done last).

        ``merge_text``: text deltas that continue the same message while unread arrive as one TextDelta (the meta
        of the first, the text of all), so a reader that only shows the text handles one event per batch, not one
        per token.
        """
        self._claim()
        self._merge = merge_text
        return self._iterate_batches()

    def _claim(self) -> None:
        if self._subscribed:
            raise RuntimeError("events() already has a consumer: a run's events go to exactly one consumer")
        if self._closed:
            self._prune_ordinary()
        self._subscribed = True
        for fut in self._subscribe_waiters:
            if not fut.done():
                fut.set_result(True)
        self._subscribe_waiters.clear()

    async def _iterate(self) -> AsyncIterator[Event]:
        items, flags = self._items, self._flags  # mutated in place only, so these stay the broker's buffers
        pop, pop_flag = items.popleft, flags.popleft
        full = self.capacity
        while True:
            if items:
                ev = pop()
                if pop_flag():
                    self._ordinary -= 1
                    if self._ordinary == full - 1:
                        self._space.set()  # a producer may be waiting for room
                yield ev
                if type(ev) is Done:
                    return
                continue
            if self._closed:
                return
            self._wake.clear()
            self._sleeping = True
            await self._wake.wait()

    async def _iterate_batches(self) -> AsyncIterator[list[Event]]:
        items, flags = self._items, self._flags
        while True:
            if items:
                self._track(None)  # what the reader takes is complete
                self._folds = 0
                batch = list(items)
                ordinary = sum(flags)
                items.clear()
                flags.clear()
                if ordinary:
                    self._ordinary -= ordinary
                    self._space.set()  # a producer may be waiting for room
                yield batch
                if type(batch[-1]) is Done:
                    return
                continue
            if self._closed:
                return
            self._wake.clear()
            self._sleeping = True
            await self._wake.wait()
