"""Threads: named conversations with a single writer, healthy checkpoints, continuity fallback and Standby."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._enums import AuthorKind, MessageFailure, MessageState, NoticeKind
from ._errors import (
    AdaptorError,
    MessageError,
    RunError,
    RunFinishedError,
    ThreadAlreadyExistsError,
    ThreadBusyError,
    ThreadCheckpointMissingError,
    ThreadIncompatibleError,
    ThreadLeaseLostError,
    ThreadNotFoundError,
)
from ._events import Event, Notice
from ._options import split_call
from ._policy import Author
from ._result import Result
from .driver._spi import Checkpoint, DriverOutcome, IdentityCodec, SessionCodec
from .threadstore._protocol import FinalizeRequest, HistoryEntry, Lease, ThreadRecord

if TYPE_CHECKING:
    from ._agent import Agent
    from ._run import Execution
    from ._stream import Stream

LEASE_TTL = 60.0  # default; a store may set ``lease_ttl`` (seconds) to change it
RECOVERY_BUDGET = 8 * 1024
RECOVERY_TURNS = 3
HISTORY_TEXT_LIMIT = 4096
FINALIZE_ATTEMPTS = 3


@dataclass
class ThreadState:
    """Per-Agent, per-key state shared by every handle of one thread."""

    key: str
    active: Execution | None = None
    standby: Standby | None = None
    pending_checkpoint: Checkpoint | None = None
    pending_request: FinalizeRequest | None = None


@dataclass
class ThreadPlan:
    """How one execution uses its thread: resume point, fork, continuity prefix, lease."""

    lease: Lease
    fingerprint: str
    record: ThreadRecord | None
    resume: Checkpoint | None = None
    fork: bool = False
    prefix: str = ""
    fresh_after_continuity: bool = False
    fell_back: bool = False
    duplicate: bool = False
    receipts: dict[str, float] = field(default_factory=dict)
    renew_task: asyncio.Task[None] | None = None


def fingerprint(agent: Agent, ex: Execution) -> str:
    """Compatibility of a saved session: driver/config, model, identity, workspace, instructions, skills, MCP."""
    s = ex.settings
    parts = {
        "driver": agent.driver.name,
        "config": agent.driver.config_fingerprint(),
        "model": s.model,
        "identity": [s.identity.id, s.identity.tenant, s.identity.profile],
        "workspace": s.workspace,
        "instructions": s.instructions,
        "skills": [getattr(k, "key", k) for k in s.skills],
        "mcp": [repr(m) for m in (s.mcp or ())],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:32]


def recovery_prefix(record: ThreadRecord | None) -> str:
    """Bounded context for a fresh session: earlier guidance and up to three recent answers, at most 8 KiB."""
    if record is None or not record.history:
        return ""
    guidance = [h.text for h in record.history if h.kind == "guidance"]
    answers = [h.text for h in record.history if h.kind == "assistant"][-RECOVERY_TURNS:]
    head = "Context from an earlier session of this conversation, which could not be resumed:\n"
    tail = "\nThe new request follows.\n\n"
    budget = RECOVERY_BUDGET - len(head.encode()) - len(tail.encode())
    sections: list[str] = []
    for title, texts in (
        ("Earlier guidance from the user:", guidance),
        ("Recent answers you gave:", answers),
    ):
        if not texts:
            continue
        lines = [title]
        for t in reversed(texts):  # newest first, so the budget keeps what matters most
            entry = f"- {t.strip()}"
            cost = len(entry.encode()) + 1
            if cost > budget:
                entry = entry.encode()[: max(0, budget - 5)].decode("utf-8", "ignore") + " …"
                cost = len(entry.encode()) + 1
            if cost > budget or budget <= 0:
                break
            lines.insert(1, entry)
            budget -= cost
        if len(lines) > 1:
            sections.append("\n".join(lines))
    if not sections:
        return ""
    return head + "\n".join(sections) + tail


class ThreadBinding:
    """Connects one execution to its thread: planning at start, persistence at the end."""

    def __init__(
        self,
        agent: Agent,
        key: str,
        *,
        resume_only: bool,
        fork_parent: str = "",
        standby: Standby | None = None,
    ):
        self.agent = agent
        self.key = key
        self.resume_only = resume_only
        self.fork_parent = fork_parent
        self.standby = standby
        self.state = agent.thread_state(key)
        self._forked = False

    @property
    def lease_ttl(self) -> float:
        ttl = getattr(self.agent.store, "lease_ttl", None)
        return float(ttl) if isinstance(ttl, int | float) and ttl > 0 else LEASE_TTL

    @property
    def codec(self) -> SessionCodec:
        codec = getattr(self.agent.driver, "session_codec", None)
        return codec if isinstance(codec, SessionCodec) else IdentityCodec()

    def _notice(self, ex: Execution, kind: str, text: str, data: dict[str, Any]) -> None:
        ex.notice(Notice(kind=kind, text=text, data=data))

    async def begin(self, ex: Execution) -> ThreadPlan:
        st = self.state
        if st.active is not None and st.active is not ex:
            raise ThreadBusyError(f"thread {self.key!r} is busy with run {st.active.run_id}", key=self.key)
        if st.standby is not None and st.standby.alive and st.standby is not self.standby:
            raise ThreadBusyError(f"thread {self.key!r} has a live Standby", key=self.key)
        st.active = ex
        store = self.agent.store
        try:
            lease = await store.acquire_lease(self.key, self.agent.owner_id, self.lease_ttl)
        except BaseException:
            st.active = None
            raise
        if lease.took_over:
            ex.notice(
                Notice(
                    kind=NoticeKind.LIFECYCLE.value,
                    text=f"thread {self.key!r}: took over the lease of {lease.took_over}",
                    metadata={"code": "thread.lease_taken_over"},
                    data={"previous": lease.took_over},
                )
            )
        try:
            return await self._plan(ex, lease)
        except BaseException:
            with contextlib.suppress(Exception):
                await store.release_lease(lease)
            st.active = None
            raise

    async def _plan(self, ex: Execution, lease: Lease) -> ThreadPlan:
        store = self.agent.store
        desc = self.agent.descriptor
        record = await store.resolve(self.key)
        fp = fingerprint(self.agent, ex)
        plan = ThreadPlan(lease=lease, fingerprint=fp, record=record, receipts=dict(record.receipts) if record else {})
        checkpoint = self.state.pending_checkpoint or (record.checkpoint if record else None)
        if self.fork_parent and checkpoint is None:
            parent_state = self.agent.thread_state(self.fork_parent)
            parent = await store.resolve(self.fork_parent)
            pckpt = parent_state.pending_checkpoint or (parent.checkpoint if parent else None)
            if pckpt is None:
                raise ThreadCheckpointMissingError(
                    f"cannot fork {self.fork_parent!r}: it has no healthy checkpoint", key=self.fork_parent
                )
            if parent is not None and parent.fingerprint and parent.fingerprint != fp:
                raise ThreadIncompatibleError(
                    f"cannot fork {self.fork_parent!r}: its session was made with another configuration",
                    key=self.fork_parent,
                )
            if desc.fork:
                plan.resume, plan.fork = pckpt, True
            else:
                plan.prefix = recovery_prefix(parent)
                plan.fresh_after_continuity = True
                self._notice(
                    ex,
                    NoticeKind.THREAD_CONTINUITY.value,
                    "fork is not supported; started a fresh session",
                    {"reason": "fork_unsupported", "parent": self.fork_parent},
                )
            return self._lease_renewal(plan)
        if self.fork_parent and record is not None and record.checkpoint is not None and self._first_fork_run(ex):
            raise ThreadAlreadyExistsError(f"fork target {self.key!r} already exists", key=self.key)
        if checkpoint is None:
            if self.resume_only:
                if record is None:
                    raise ThreadNotFoundError(f"thread {self.key!r} does not exist (resume_only)", key=self.key)
                raise ThreadCheckpointMissingError(f"thread {self.key!r} has no healthy checkpoint", key=self.key)
            return self._lease_renewal(plan)
        if record is not None and record.fingerprint and record.fingerprint != fp:
            if self.resume_only:
                raise ThreadIncompatibleError(
                    f"thread {self.key!r} was made with another driver/config/model/workspace", key=self.key
                )
            await self.fall_back(ex, plan, "incompatible", "the configuration changed since the last run")
            return self._lease_renewal(plan)
        if not desc.resume:
            if self.resume_only:
                raise ThreadIncompatibleError(f"driver {desc.name!r} cannot resume sessions", key=self.key)
            await self.fall_back(ex, plan, "resume_unsupported", "the driver cannot resume sessions")
            return self._lease_renewal(plan)
        plan.resume = checkpoint
        return self._lease_renewal(plan)

    def _first_fork_run(self, ex: Execution) -> bool:
        return not self._forked

    def _lease_renewal(self, plan: ThreadPlan) -> ThreadPlan:
        ttl = self.lease_ttl

        async def renew() -> None:
            while True:
                await asyncio.sleep(ttl / 3)
                try:
                    plan.lease = await self.agent.store.renew_lease(plan.lease, ttl)
                except ThreadLeaseLostError:
                    return
                except Exception:  # a transient store error (a locked file): try again next period
                    continue

        plan.renew_task = asyncio.get_running_loop().create_task(renew())
        return plan

    async def fall_back(self, ex: Execution, plan: ThreadPlan, reason: str, detail: str) -> None:
        """Start a fresh session once, with bounded recovery context, and say so with a thread.continuity notice."""
        plan.resume = None
        plan.fork = False
        plan.fresh_after_continuity = True
        plan.prefix = recovery_prefix(plan.record)
        self._notice(
            ex,
            NoticeKind.THREAD_CONTINUITY.value,
            f"started a fresh session for thread {self.key!r}: {detail}",
            {"reason": reason, "detail": detail, "recovery_bytes": len(plan.prefix.encode())},
        )

    def checkpoint_for(self, ex: Execution, outcome: DriverOutcome) -> Checkpoint | None:
        if not outcome.session_id or self.plan_fingerprint(ex) is None:
            return None
        return Checkpoint(
            session_id=outcome.session_id,
            driver=self.agent.driver.name,
            fingerprint=self.plan_fingerprint(ex) or "",
            run_id=ex.run_id,
            created_at=time.time(),
            data=dict(outcome.checkpoint_data),
        )

    @staticmethod
    def plan_fingerprint(ex: Execution) -> str | None:
        return ex.plan.fingerprint if ex.plan else None

    def abandon(self, ex: Execution) -> None:
        if self.state.active is ex:
            self.state.active = None

    async def finish(self, ex: Execution, plan: ThreadPlan, result: Result | None, error: BaseException | None) -> None:
        """Persist under the lease: a new checkpoint only after a healthy success; always release the lease."""
        st = self.state
        store = self.agent.store
        if plan.renew_task is not None:
            plan.renew_task.cancel()
        try:
            if plan.duplicate:
                return
            healthy = self._healthy_checkpoint(ex, plan, result, error)
            if healthy is not None:
                st.pending_checkpoint = healthy
            history: list[HistoryEntry] = []
            now = time.time()
            for m in ex.queue.delivered_entries():
                if m.author.kind is AuthorKind.HUMAN:
                    history.append(HistoryEntry("guidance", m.text[:HISTORY_TEXT_LIMIT], now))
            if result is not None and result.text:
                history.append(HistoryEntry("assistant", result.text[:HISTORY_TEXT_LIMIT], now))
            usage = result.usage if result is not None else None
            req = FinalizeRequest(
                driver=self.agent.driver.name,
                fingerprint=plan.fingerprint if (healthy is not None or plan.record is None) else "",
                checkpoint=st.pending_checkpoint,
                archive_previous=plan.fresh_after_continuity and healthy is not None,
                require_absent=plan.fork,
                receipts=dict(ex.queue.new_receipts),
                history=tuple(history),
                status="ok"
                if error is None
                else ("cancelled" if getattr(error, "reason", None) == "cancelled" else "failed"),
                run_id=ex.run_id,
                usage=(
                    {
                        "input_tokens": usage.input_tokens,
                        "output_tokens": usage.output_tokens,
                        "cached_input_tokens": usage.cached_input_tokens,
                        "estimated_cost_milli": usage.estimated_cost_milli,
                    }
                    if usage is not None
                    else {}
                ),
            )
            if st.pending_request is not None:
                req = _merge_requests(st.pending_request, req)
            await self._persist(ex, plan, req)
            if plan.fork and error is None:
                self._forked = True
        finally:
            with contextlib.suppress(Exception):
                await store.release_lease(plan.lease)
            if st.active is ex:
                st.active = None

    def _healthy_checkpoint(
        self, ex: Execution, plan: ThreadPlan, result: Result | None, error: BaseException | None
    ) -> Checkpoint | None:
        if error is not None or result is None or ex.last_outcome is None:
            return None
        outcome = ex.last_outcome
        if not outcome.healthy or not outcome.session_id:
            return None
        codec = self.codec
        try:
            if codec.decode(codec.encode(outcome.session_id)) != outcome.session_id:
                return None
        except Exception:
            return None
        return Checkpoint(
            session_id=outcome.session_id,
            driver=self.agent.driver.name,
            fingerprint=plan.fingerprint,
            run_id=ex.run_id,
            created_at=time.time(),
            data=dict(outcome.checkpoint_data),
        )

    async def _persist(self, ex: Execution, plan: ThreadPlan, req: FinalizeRequest) -> None:
        st = self.state
        store = self.agent.store
        last: BaseException | None = None
        for attempt in range(1, FINALIZE_ATTEMPTS + 1):
            try:
                await store.finalize(plan.lease, req)
                st.pending_checkpoint = None
                st.pending_request = None
                return
            except ThreadLeaseLostError as exc:
                # Another owner took over: what we hold may be older than what it saved, so drop it.
                st.pending_checkpoint = None
                st.pending_request = None
                self._notice(
                    ex,
                    NoticeKind.THREAD_PERSISTENCE.value,
                    f"thread {self.key!r} was not saved: the lease was lost to another owner",
                    {"error": f"{type(exc).__name__}: {exc}", "retained_in_process": False, "final": True},
                )
                return
            except ThreadAlreadyExistsError as exc:
                last = exc
                break
            except Exception as exc:
                last = exc
                self._notice(
                    ex,
                    NoticeKind.THREAD_PERSISTENCE.value,
                    f"saving thread {self.key!r} failed (attempt {attempt} of {FINALIZE_ATTEMPTS}): {exc}",
                    {
                        "attempt": attempt,
                        "error": f"{type(exc).__name__}: {exc}",
                        "retained_in_process": True,
                    },
                )
                if attempt < FINALIZE_ATTEMPTS:
                    await asyncio.sleep(0.05 * attempt)
        st.pending_request = req
        self._notice(
            ex,
            NoticeKind.THREAD_PERSISTENCE.value,
            f"thread {self.key!r} was not saved; the newest checkpoint stays in this process for the next run",
            {"error": f"{type(last).__name__}: {last}", "retained_in_process": True, "final": True},
        )
        if isinstance(last, ThreadAlreadyExistsError):
            raise last


def _merge_requests(old: FinalizeRequest, new: FinalizeRequest) -> FinalizeRequest:
    """Fold an unsaved earlier request into the next one so receipts, history and usage are not lost."""
    from dataclasses import replace

    usage = dict(old.usage)
    for k, v in new.usage.items():
        usage[k] = usage.get(k, 0) + v
    return replace(
        new,
        checkpoint=new.checkpoint or old.checkpoint,
        archive_previous=new.archive_previous or old.archive_previous,
        receipts={**old.receipts, **new.receipts},
        history=(*old.history, *new.history),
        usage=usage,
        runs=old.runs + new.runs,
    )


class Thread:
    """A named conversation. ``send`` continues it (or starts it); one run at a time."""

    def __init__(self, agent: Agent, key: str, *, resume_only: bool = False, fork_parent: str = "") -> None:
        if not isinstance(key, str) or not key:
            raise ValueError("a Thread key must be a non-empty string")
        self._agent = agent
        self._key = key
        self._resume_only = resume_only
        self._fork_parent = fork_parent
        self._binding = ThreadBinding(agent, key, resume_only=resume_only, fork_parent=fork_parent)

    @property
    def key(self) -> str:
        return self._key

    @property
    def agent(self) -> Agent:
        return self._agent

    def __repr__(self) -> str:
        return f"Thread({self._key!r})"

    def send(self, prompt: str, **options: Any) -> Stream:
        """Continue (or start) this thread with ``prompt``; returns the run's Stream at once."""
        return self._agent._start(prompt, options, binding=self._binding, where="Thread.send")

    def fork(self, new_key: str) -> Thread:
        """A new thread that starts from this one's latest checkpoint at its first run; this one is unchanged."""
        if not isinstance(new_key, str) or not new_key:
            raise ValueError("a fork key must be a non-empty string")
        return Thread(self._agent, new_key, fork_parent=self._key)

    async def checkpoint(self) -> Checkpoint | None:
        """The latest healthy resume point (an unsaved in-process one first), or None."""
        st = self._agent.thread_state(self._key)
        if st.pending_checkpoint is not None:
            return st.pending_checkpoint
        record = await self._agent.store.resolve(self._key)
        return record.checkpoint if record else None

    async def record(self) -> ThreadRecord | None:
        """The stored record of this thread (history, receipts, usage), or None."""
        return await self._agent.store.resolve(self._key)

    async def standby(self) -> Standby:
        """A long-lived conversation handle: messages join the current run or start the next one."""
        st = self._agent.thread_state(self._key)
        if st.standby is not None and st.standby.alive:
            return st.standby
        if st.active is not None:
            raise ThreadBusyError(f"thread {self._key!r} is busy with run {st.active.run_id}", key=self._key)
        sb = Standby(self)
        st.standby = sb
        return sb


class Standby:
    """A conversation handle with no overall result: each execution has its own run id and Done."""

    def __init__(self, thread: Thread) -> None:
        self._thread = thread
        self._agent = thread.agent
        self._binding = ThreadBinding(self._agent, thread.key, resume_only=False, fork_parent="", standby=self)
        self._current: Stream | None = None
        self._queue: list[tuple[str, dict[str, Any]]] = []
        self._carried: list[tuple[str, str, Author]] = []
        self._events: asyncio.Queue[Event | None] = asyncio.Queue()  # None: the Standby was closed
        self._subscribed = False
        self._alive = True
        self._pump: asyncio.Task[None] | None = None
        self._retried: set[str] = set()

    @property
    def alive(self) -> bool:
        return self._alive

    @property
    def current(self) -> Stream | None:
        return self._current

    async def send(self, text: str, **options: Any) -> None:
        """Join the current run (message-only) or start one; any execution option queues a separate run."""
        if not self._alive:
            raise RunFinishedError("this Standby is closed", text=text)
        shared, call = split_call(options, "Standby.send")
        msg = {k: call[k] for k in ("id", "author", "when") if k in call}
        exec_options = bool(shared) or any(k not in ("id", "author", "when") for k in call)
        cur = self._current
        if cur is not None and not cur.done and not exec_options:
            try:
                await cur.send(text, **msg)
                return
            except RunFinishedError:
                pass
        if cur is not None and not cur.done:
            self._queue.append((text, options))
            return
        self._start(text, options)

    def _start(self, text: str, options: dict[str, Any]) -> None:
        stream = self._agent._start(text, options, binding=self._binding, where="Standby.send")
        self._current = stream
        carried, self._carried = self._carried, []
        self._pump = asyncio.get_running_loop().create_task(self._forward(stream, carried))

    async def _forward(self, stream: Stream, carried: list[tuple[str, str, Author]]) -> None:
        for msg_id, text, author in carried:
            with contextlib.suppress(MessageError):
                await stream.send(text, id=msg_id, author=author)
        async for ev in stream.events():
            if self._subscribed:
                await self._events.put(ev)
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
            text, options = self._queue.pop(0)
            self._start(text, options)

    async def events(self) -> AsyncIterator[Event]:
        """Events of every execution, in order (single consumer; events before the first call are discarded)."""
        if self._subscribed:
            raise RuntimeError("Standby.events() already has a consumer")
        self._subscribed = True
        while True:
            ev = await self._events.get()
            if ev is None:  # closed
                return
            yield ev

    def cancel(self) -> None:
        """Cancel current processing; queued input fails with CANCELLED; the Standby keeps accepting input."""
        self._queue.clear()
        self._carried.clear()
        if self._current is not None:
            self._current.cancel()

    async def close(self) -> None:
        """Cancel, wait for the current run to end and release the thread."""
        self.cancel()
        if self._current is not None:
            with contextlib.suppress(BaseException):
                await self._current.result()
        if self._pump is not None:
            with contextlib.suppress(BaseException):
                await self._pump
        self._alive = False
        self._events.put_nowait(None)
        st = self._agent.thread_state(self._thread.key)
        if st.standby is self:
            st.standby = None


from ._naming import publish as _publish  # noqa: E402

_publish(__name__, globals())
