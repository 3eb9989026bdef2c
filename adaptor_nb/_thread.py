"""Threads: named conversations (Thread) and long-lived conversation handles (Standby)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Unpack

from ._approvals import ApprovalRequest
from ._core._background import BACKGROUND
from ._core._binding import ThreadBinding
from ._core._options import CallOption, SendOptions, split_call
from ._enums import MessageFailure, MessageState, Timing
from ._errors import AdaptorError, MessageError, RunError, RunFinishedError, ThreadBusyError
from ._events import Event, MessageUpdate
from ._policy import Author
from ._result import Result
from ._stream import Stream
from .driver._spi import Checkpoint

if TYPE_CHECKING:
    from ._agent import Agent
    from ._core._engine import Engine
    from .threadstore._protocol import ThreadRecord


class Thread:
    """A named conversation. ``send`` continues it (or starts it); one run at a time."""

    def __init__(self, agent: Agent, key: str, *, resume_only: bool = False, fork_parent: str = "") -> None:
        if not isinstance(key, str) or not key:
            raise ValueError("a Thread key must be a non-empty string")
        self._agent = agent
        self._engine: Engine = agent.engine
        self._key = key
        self._resume_only = resume_only
        self._fork_parent = fork_parent
        self._binding = self._engine.binding(key, resume_only=resume_only, fork_parent=fork_parent)

    @property
    def key(self) -> str:
        return self._key

    @property
    def agent(self) -> Agent:
        """The Agent this thread was opened from."""
        return self._agent

    @property
    def engine(self) -> Engine:
        """The runtime state below this handle (internal)."""
        return self._engine

    def __repr__(self) -> str:
        return f"Thread({self._key!r})"

    def send(self, prompt: str, *extensions: CallOption, **options: Unpack[SendOptions]) -> Stream:
        """Continue (or start) this thread with ``prompt``; returns the run's Stream at once."""
        return Stream(
            self._engine.start(prompt, options, binding=self._binding, where="Thread.send", extensions=extensions)
        )

    def run_sync(self, prompt: str, *extensions: CallOption, **options: Unpack[SendOptions]) -> Result:
        """Continue this thread with ``prompt`` from synchronous code and return the Result. Calls share one
        background loop, so the thread's provider process is kept between them and reaped at exit."""
        result: Result = BACKGROUND.run(lambda: self.send(prompt, *extensions, **options).result(), "Thread.run_sync()")
        return result

    def fork(self, new_key: str) -> Thread:
        """A new thread that starts from this one's latest checkpoint at its first run; this one is unchanged."""
        if not isinstance(new_key, str) or not new_key:
            raise ValueError("a fork key must be a non-empty string")
        return Thread(self._agent, new_key, fork_parent=self._key)

    async def checkpoint(self) -> Checkpoint | None:
        """The latest healthy resume point (an unsaved in-process one first), or None."""
        st = self._engine.thread_state(self._key)
        if st.pending_checkpoint is not None:
            return st.pending_checkpoint
        record = await self._engine.store.resolve(self._key)
        return record.checkpoint if record else None

    async def record(self) -> ThreadRecord | None:
        """The stored record of this thread (history, receipts, usage), or None."""
        return await self._engine.store.resolve(self._key)

    async def standby(self) -> Standby:
        """A long-lived conversation handle: messages join the current run or start the next one."""
        st = self._engine.thread_state(self._key)
        if isinstance(st.standby, Standby) and st.standby.alive:
            return st.standby
        if st.active is not None:
            raise ThreadBusyError(
                f"thread {self._key!r} is busy with run {st.active}: wait for it to finish (await its result()), "
                "cancel it, or use another thread key",
                key=self._key,
            )
        sb = Standby(self)
        st.standby = sb
        return sb


class Standby:
    """A conversation handle with no overall result: each execution has its own run id and Done."""

    def __init__(self, thread: Thread) -> None:
        self._thread = thread
        self._engine = thread.engine
        self._binding: ThreadBinding = self._engine.binding(thread.key, standby=self)
        self._current: Stream | None = None
        self._queue: list[tuple[str, dict[str, Any], tuple[CallOption, ...]]] = []
        self._carried: list[tuple[str, str, Author]] = []
        self._events: asyncio.Queue[Event | None] = asyncio.Queue()  # None: the Standby was closed
        # Events forwarded from runs wait here for the consumer, at most event_buffer of them: beyond that the
        # forwarder stops reading the run, whose own buffer then applies the normal backpressure and Dropped rules.
        self._bound = self._engine.settings.event_buffer
        self._room = asyncio.Event()
        self._closing = False
        self._subscribed = False
        self._consumer = asyncio.Event()  # set by the first events() call
        self._held: list[ApprovalRequest] = []
        self._alive = True
        self._pump: asyncio.Task[None] | None = None
        self._retried: set[str] = set()

    @property
    def alive(self) -> bool:
        return self._alive

    @property
    def current(self) -> Stream | None:
        return self._current

    async def wait_for_consumer(self) -> None:
        """Return once ``events()`` has been called (approvals raised before then wait for it)."""
        await self._consumer.wait()

    async def send(self, text: str, *extensions: CallOption, **options: Unpack[SendOptions]) -> None:
        """Join the current run (message-only) or start one; any execution option queues a separate run."""
        if not self._alive:
            raise RunFinishedError("this Standby is closed", text=text)
        shared, call = split_call(options, "Standby.send")
        msg = {k: call[k] for k in ("id", "author", "when") if k in call}
        exec_options = bool(shared) or bool(extensions) or any(k not in ("id", "author", "when") for k in call)
        cur = self._current
        if cur is not None and not cur.done and not exec_options:
            try:
                await cur.send(text, **msg)
                return
            except RunFinishedError:
                pass
        if cur is not None and not cur.done:
            self._queue.append((text, dict(options), extensions))
            return
        self._start(text, dict(options), extensions)

    def _start(self, text: str, options: dict[str, Any], extensions: tuple[CallOption, ...] = ()) -> None:
        stream = Stream(
            self._engine.start(text, options, binding=self._binding, where="Standby.send", extensions=extensions)
        )
        self._current = stream
        carried, self._carried = self._carried, []
        self._pump = asyncio.get_running_loop().create_task(self._forward(stream, carried))

    async def _forward(self, stream: Stream, carried: list[tuple[str, str, Author]]) -> None:
        for msg_id, text, author in carried:
            with contextlib.suppress(MessageError):
                await stream.send(text, id=msg_id, author=author)
        async for ev in stream.events():
            if self._subscribed:
                while self._events.qsize() >= self._bound and not self._closing:
                    self._room.clear()
                    await self._room.wait()
                self._events.put_nowait(ev)
            elif isinstance(ev, ApprovalRequest):
                self._held.append(ev)  # an approval waits for events() instead of being discarded
        await self._after(stream)

    async def _after(self, stream: Stream) -> None:
        try:
            await stream.result()
            failed: RunError | None = None
        except RunError as exc:
            failed = exc
        except AdaptorError:
            failed = None
        if failed is not None and failed.result is not None and failed.reason.value != "cancelled":
            lost = [m for m in failed.result.undelivered() if m.reason is MessageFailure.RUN_FAILED]
            self._carried.extend((m.id, m.text, m.author) for m in lost if m.state is MessageState.FAILED)
            if failed.details.get("retryable") and self._carried and stream.run_id not in self._retried:
                delay = min(float(failed.details.get("retry_after") or 1.0), 5.0)
                await asyncio.sleep(delay)
                if self._alive and (self._current is stream):
                    first_id, first_text, _ = self._carried.pop(0)
                    self._retried.add(stream.run_id)
                    self._start(first_text, {"id": first_id})
                    self._retried.add(self._current.run_id if self._current else "")
                    return
        if self._queue and self._alive and self._current is stream:
            text, options, extensions = self._queue.pop(0)
            self._start(text, options, extensions)

    async def events(self) -> AsyncIterator[Event]:
        """Events of every execution, in order (single consumer; events before the first call are discarded)."""
        if self._subscribed:
            raise RuntimeError("Standby.events() already has a consumer")
        self._subscribed = True
        held, self._held = self._held, []
        for req in held:
            if req.state == "pending":
                self._events.put_nowait(req)
        self._consumer.set()
        while True:
            ev = await self._events.get()
            self._room.set()
            if ev is None:  # closed
                return
            yield ev

    def cancel(self) -> None:
        """Cancel current processing; queued input fails with CANCELLED; the Standby keeps accepting input."""
        queued, self._queue = self._queue, []
        carried, self._carried = self._carried, []
        import uuid

        lost = [
            (
                o.get("id") or f"msg_{uuid.uuid4().hex[:12]}",
                t,
                o.get("author") or Author(),
                o.get("when") or Timing.SOON,
            )
            for t, o, _ in queued
        ]
        lost += [(msg_id, t, author, Timing.SOON) for msg_id, t, author in carried]
        cur = self._current
        if lost and cur is not None and not cur.done:
            # Reported by the execution being cancelled: a MessageUpdate each and an outcome in its Result.
            for msg_id, t, author, when in lost:
                cur._ex.queue.fail_unstarted(msg_id, t, author, when, MessageFailure.CANCELLED)
        elif lost and self._subscribed:
            for msg_id, t, _, _ in lost:
                self._events.put_nowait(
                    MessageUpdate(id=msg_id, state=MessageState.FAILED, reason=MessageFailure.CANCELLED, text=t)
                )
        if cur is not None:
            cur.cancel()

    async def close(self) -> None:
        """Cancel, wait for the current run to end and release the thread."""
        self._closing = True
        self._room.set()  # a forwarder waiting for a stalled consumer finishes
        self.cancel()
        if self._current is not None:
            with contextlib.suppress(BaseException):
                await self._current.result()
        if self._pump is not None:
            with contextlib.suppress(BaseException):
                await self._pump
        self._alive = False
        self._events.put_nowait(None)
        st = self._engine.thread_state(self._thread.key)
        if st.standby is self:
            st.standby = None
