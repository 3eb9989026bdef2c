"""The bridge's request logic, apart from HTTP: one RunAgentInput in, one AG-UI run of events out."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from ag_ui.core import RunAgentInput

from ..._errors import AdaptorError, ApprovalError
from ..._events import Event
from . import _resume as resume
from . import _runframe as frame
from ._input import latest_user_message
from ._keys import thread_key
from ._live import LiveRun, encode
from ._registry import RunRegistry

if TYPE_CHECKING:
    from ..._agent import Agent
    from ..._thread import Thread

log = logging.getLogger("adaptor_nb.bridges.agui")


class Bridge:
    """Routes AG-UI input to an Agent's Threads: new messages start or join runs, resume entries answer approvals."""

    def __init__(
        self,
        agent_or_factory: Any,
        *,
        thread: str | None = None,
        key: Callable[[str], str] = thread_key,
        resume_only: bool = False,
        call_options: dict[str, Any] | None = None,
        on_event: Callable[[str, Event], None] | None = None,
    ) -> None:
        self._source = agent_or_factory
        self._agent: Agent | None = None
        self._owns_agent = False
        self._agent_lock = asyncio.Lock()
        self._pinned = thread
        self._key = key
        self._resume_only = resume_only
        self._call_options = dict(call_options or {})
        self._on_event = on_event
        self.registry = RunRegistry()
        self.lives: dict[str, LiveRun] = {}
        self._threads: dict[str, Thread] = {}
        self._closed = False

    def key_of(self, thread_id: str) -> str:
        """The Thread key an AG-UI ``threadId`` selects."""
        return self._pinned or self._key(thread_id)

    async def agent(self) -> Agent:
        from ..._agent import Agent

        if self._agent is not None:
            return self._agent
        async with self._agent_lock:
            if self._agent is None:
                source = self._source
                if isinstance(source, Agent):
                    self._agent = source
                else:
                    made = source()
                    if inspect.isawaitable(made):
                        made = await made
                    if not isinstance(made, Agent):
                        raise TypeError(f"the agent factory returned {type(made).__name__}, not an Agent")
                    self._agent, self._owns_agent = made, True
        return self._agent

    async def _thread(self, key: str) -> Thread:
        th = self._threads.get(key)
        if th is None:
            th = self._threads[key] = (await self.agent()).thread(key, resume_only=self._resume_only)
        return th

    def _ended(self, live: LiveRun) -> None:
        if self.lives.get(live.key) is live:
            del self.lives[live.key]
        self.registry.forget(live.key, live.stream)

    def live(self, key: str) -> LiveRun | None:
        live = self.lives.get(key)
        return live if live is not None and live.done is None else None

    async def run(self, input: RunAgentInput) -> AsyncIterator[list[str]]:
        """The AG-UI run answering ``input``: RUN_STARTED, the events, then RUN_FINISHED or RUN_ERROR, as batches of
        JSON texts (one per event)."""
        thread_id, run_id = input.thread_id, input.run_id
        if self._closed:
            async for ev in _refused(thread_id, run_id, "the AG-UI endpoint is shutting down", "unavailable"):
                yield ev
            return
        try:
            key = self.key_of(thread_id)
        except ValueError as exc:
            async for batch in _refused(thread_id, run_id, str(exc), "invalid_thread_id"):
                yield batch
            return
        live = self.live(key)
        sent = False
        try:
            if input.resume:
                events = self._resume(input, key, live)
            else:
                events = await self._message(input, key, live)
            async for batch in events:
                sent = True
                yield batch
        except Exception as exc:  # a fault of the bridge itself: end the AG-UI run properly, keep the server up
            log.exception("the AG-UI bridge failed on a request for thread %r", thread_id)
            opening = [] if sent else [encode(frame.started(thread_id, run_id))]
            yield [*opening, encode(frame.failed(f"the bridge failed: {exc!r}", "internal_error"))]

    async def _message(self, input: RunAgentInput, key: str, live: LiveRun | None) -> AsyncIterator[list[str]]:
        thread_id, run_id = input.thread_id, input.run_id
        message = latest_user_message(input)
        if live is not None and (message is None or message.id in live.message_ids):
            # A reconnect (or a client with nothing new to say): show the active run.
            return live.subscribe().frames(thread_id, run_id, input.messages)
        if message is None:
            text = "the input has no user message to run and no interrupt to resume"
            return _refused(thread_id, run_id, text, "no_input")
        if live is not None and live.pending():
            ids = ", ".join(r.id for r in live.pending())
            return _refused(
                thread_id,
                run_id,
                f"the run is waiting for answers to interrupts {ids}: resume them before sending a new message",
                "interrupt_pending",
            )
        sub = live.subscribe() if live is not None else None  # before sending, so the receipts are seen
        try:
            thread = await self._thread(key)
            stream, supplemented = await self.registry.send(thread, input, **self._call_options)
        except (AdaptorError, TypeError, ValueError) as exc:
            if sub is not None:
                sub.close()
            return _refused(thread_id, run_id, str(exc) or type(exc).__name__, _code(exc))
        if supplemented and live is not None and stream is live.stream:
            live.admitted(message.id)
            assert sub is not None
            return sub.frames(thread_id, run_id, input.messages)
        if sub is not None:
            sub.close()
        if supplemented:
            # Another request started this run while this one was on its way (both found the thread idle).
            current = self.live(key)
            if current is not None and current.stream is stream:
                current.admitted(message.id)
                return current.subscribe().frames(thread_id, run_id, input.messages)
            return _refused(thread_id, run_id, "the thread is busy with a run of another client", "thread_busy")
        live = LiveRun(stream, key, self._ended, self._on_event)
        live.admitted(message.id)
        self.lives[key] = live
        fresh = live.subscribe()
        live.start()
        return fresh.frames(thread_id, run_id)

    def _resume(self, input: RunAgentInput, key: str, live: LiveRun | None) -> AsyncIterator[list[str]]:
        thread_id, run_id = input.thread_id, input.run_id
        entries = input.resume or []
        if live is None:
            ids = ", ".join(e.interrupt_id for e in entries)
            return _refused(thread_id, run_id, f"no run of this thread waits for interrupts {ids}", "unknown_interrupt")
        pending = {r.id: r for r in live.pending()}
        for entry in entries:
            request = pending.get(entry.interrupt_id)
            if request is None:
                earlier = live.request(entry.interrupt_id)
                if earlier is not None:
                    text = f"interrupt {entry.interrupt_id} was already answered ({_who(earlier.decision)})"
                    return _refused(thread_id, run_id, text, "interrupt_answered")
                return _refused(thread_id, run_id, f"unknown interrupt id {entry.interrupt_id!r}", "unknown_interrupt")
            try:
                resume.check(entry, request)
            except resume.ResumeError as exc:
                return _refused(thread_id, run_id, str(exc), exc.code)
        sub = live.subscribe()
        lost: list[str] = []
        for entry in entries:
            request = pending[entry.interrupt_id]
            try:
                resume.apply(entry, request)
            except ApprovalError:
                lost.append(f"interrupt {entry.interrupt_id} was already answered ({_who(request.decision)})")
        if lost:
            sub.close()
            return _refused(thread_id, run_id, "; ".join(lost), "interrupt_answered")
        return sub.frames(thread_id, run_id, input.messages)

    async def close(self) -> None:
        """Cancel every run this bridge started, wait for them to end, and close an Agent it made."""
        self._closed = True
        lives = list(self.lives.values())
        for live in lives:
            live.stream.cancel()
        for live in lives:
            await live.wait()
        if self._owns_agent and self._agent is not None:
            with contextlib.suppress(Exception):
                await self._agent.close()


def _who(decision: Any) -> str:
    if decision is None:
        return "it expired"
    return f"{decision.action} by {decision.by}"


def _code(exc: BaseException) -> str:
    return getattr(getattr(exc, "reason", None), "value", "") or type(exc).__name__


async def _refused(thread_id: str, run_id: str, message: str, code: str) -> AsyncIterator[list[str]]:
    yield [encode(frame.started(thread_id, run_id)), encode(frame.failed(message, code))]
