"""Thread bindings: single-writer leases, healthy checkpoints, continuity fallback and persistence of one thread."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, cast

from .._enums import AuthorKind, NoticeKind
from .._errors import (
    ThreadAlreadyExistsError,
    ThreadBusyError,
    ThreadCheckpointMissingError,
    ThreadIncompatibleError,
    ThreadLeaseLostError,
    ThreadNotFoundError,
)
from .._events import Notice
from .._result import MessageOutcome, Result
from ..driver._spi import Checkpoint, Descriptor, Driver, DriverOutcome, IdentityCodec, SessionCodec
from ._options import RunSettings

if TYPE_CHECKING:  # the store vocabulary loads with the first store (built lazily when none is given)
    from ..threadstore._protocol import FinalizeRequest, HistoryEntry, Lease, Store, ThreadRecord

LEASE_TTL = 60.0  # default; a store may set ``lease_ttl`` (seconds) to change it
RECOVERY_BUDGET = 8 * 1024
RECOVERY_TURNS = 3
HISTORY_TEXT_LIMIT = 4096
FINALIZE_ATTEMPTS = 3


class StandbyHandle(Protocol):
    """What the engine needs of a Standby: whether it is alive, cancelling it, and waiting for its consumer."""

    @property
    def alive(self) -> bool: ...

    def cancel(self) -> None: ...

    async def wait_for_consumer(self) -> None: ...


NoticeSink = Callable[[Notice], None]


@dataclass
class ThreadState:
    """Per-Agent, per-key state shared by every handle of one thread (``active`` is the running run's id)."""

    key: str
    active: str | None = None
    standby: StandbyHandle | None = None
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


@dataclass(frozen=True)
class ThreadHost:
    """What thread bindings need from the Agent's runtime: the store, the driver and the per-key states."""

    get_store: Callable[[], Store]  # the Agent's store, built on first use when none was given
    driver: Driver
    descriptor: Descriptor
    owner_id: str
    state: Callable[[str], ThreadState]
    profile_identity: str = ""
    tools: list[list[str]] = field(default_factory=list)

    @property
    def store(self) -> Store:
        return self.get_store()


def fingerprint(driver: Driver, s: RunSettings, profile: str = "", tools: list[list[str]] | None = None) -> str:
    """Compatibility of a saved session: driver/config, model, identity, workspace, instructions, skills, MCP."""
    parts: dict[str, Any] = {
        "driver": driver.name,
        "config": driver.config_fingerprint(),
        "model": s.model,
        "identity": [s.identity.id, s.identity.tenant, s.identity.profile],
        "workspace": s.workspace,
        "instructions": s.instructions,
        "skills": [getattr(k, "key", k) for k in s.skills],
        "mcp": [repr(m) for m in (s.mcp or ())],
    }
    if s.append_instructions:  # absent when unused: fingerprints made without it stay the same
        parts["append_instructions"] = s.append_instructions
    if profile:  # a chosen profile enters compatibility (unchanged fingerprints without one)
        parts["profile"] = profile
    if tools:
        parts["tools"] = tools
    import hashlib
    import json

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
        # The title and the newline joining it to the sections before it count against the budget too.
        title_cost = len(title.encode()) + 1
        if not texts or title_cost >= budget:
            continue
        budget -= title_cost
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
        else:
            budget += title_cost
    if not sections:
        return ""
    return head + "\n".join(sections) + tail


class ThreadBinding:
    """Connects one execution to its thread: planning at start, persistence at the end."""

    def __init__(
        self,
        host: ThreadHost,
        key: str,
        *,
        resume_only: bool,
        fork_parent: str = "",
        standby: StandbyHandle | None = None,
    ):
        self.host = host
        self.key = key
        self.resume_only = resume_only
        self.fork_parent = fork_parent
        self.standby = standby
        self.state = host.state(key)
        self._forked = False

    @property
    def lease_ttl(self) -> float:
        ttl = getattr(self.host.store, "lease_ttl", None)
        return float(ttl) if isinstance(ttl, int | float) and ttl > 0 else LEASE_TTL

    @property
    def codec(self) -> SessionCodec:
        codec = getattr(self.host.driver, "session_codec", None)
        # What isinstance(codec, SessionCodec) checks, without the Protocol machinery it costs on every run.
        if callable(getattr(codec, "encode", None)) and callable(getattr(codec, "decode", None)):
            return cast(SessionCodec, codec)
        return IdentityCodec()

    @staticmethod
    def _notice(notice: NoticeSink, kind: str, text: str, data: dict[str, Any]) -> None:
        notice(Notice(kind=kind, text=text, data=data))

    async def begin(self, run_id: str, settings: RunSettings, notice: NoticeSink) -> ThreadPlan:
        st = self.state
        if st.active is not None and st.active != run_id:
            raise ThreadBusyError(
                f"thread {self.key!r} is busy with run {st.active}: wait for it to finish (await its result()), "
                "cancel it, or use another thread key",
                key=self.key,
            )
        if st.standby is not None and st.standby.alive and st.standby is not self.standby:
            raise ThreadBusyError(
                f"thread {self.key!r} has a live Standby: send through it, or close it first (await standby.close())",
                key=self.key,
            )
        st.active = run_id
        store = self.host.store
        try:
            lease = await store.acquire_lease(self.key, self.host.owner_id, self.lease_ttl)
        except BaseException:
            st.active = None
            raise
        if lease.took_over:
            notice(
                Notice(
                    kind=NoticeKind.THREAD_OWNERSHIP.value,
                    text=f"thread {self.key!r}: took over the lease of {lease.took_over}",
                    metadata={"code": "thread.lease_taken_over"},
                    data={"previous": lease.took_over},
                )
            )
        try:
            return await self._plan(settings, lease, notice)
        except BaseException:
            with contextlib.suppress(Exception):
                await store.release_lease(lease)
            st.active = None
            raise

    async def _plan(self, settings: RunSettings, lease: Lease, notice: NoticeSink) -> ThreadPlan:
        store = self.host.store
        desc = self.host.descriptor
        record = await store.resolve(self.key)
        fp = fingerprint(self.host.driver, settings, self.host.profile_identity, self.host.tools)
        plan = ThreadPlan(lease=lease, fingerprint=fp, record=record, receipts=dict(record.receipts) if record else {})
        checkpoint = self.state.pending_checkpoint or (record.checkpoint if record else None)
        if self.fork_parent and checkpoint is None:
            parent_state = self.host.state(self.fork_parent)
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
                    notice,
                    NoticeKind.THREAD_CONTINUITY.value,
                    "fork is not supported; started a fresh session",
                    {"reason": "fork_unsupported", "parent": self.fork_parent},
                )
            return self._lease_renewal(plan, notice)
        if self.fork_parent and record is not None and record.checkpoint is not None and not self._forked:
            raise ThreadAlreadyExistsError(f"fork target {self.key!r} already exists", key=self.key)
        if checkpoint is None:
            if self.resume_only:
                if record is None:
                    raise ThreadNotFoundError(f"thread {self.key!r} does not exist (resume_only)", key=self.key)
                raise ThreadCheckpointMissingError(f"thread {self.key!r} has no healthy checkpoint", key=self.key)
            return self._lease_renewal(plan, notice)
        if record is not None and record.fingerprint and record.fingerprint != fp:
            if self.resume_only:
                raise ThreadIncompatibleError(
                    f"thread {self.key!r} was made with another driver/config/model/workspace", key=self.key
                )
            self.fall_back(plan, "incompatible", "the configuration changed since the last run", notice)
            return self._lease_renewal(plan, notice)
        if not desc.resume:
            if self.resume_only:
                raise ThreadIncompatibleError(f"driver {desc.name!r} cannot resume sessions", key=self.key)
            self.fall_back(plan, "resume_unsupported", "the driver cannot resume sessions", notice)
            return self._lease_renewal(plan, notice)
        plan.resume = checkpoint
        return self._lease_renewal(plan, notice)

    def _lease_renewal(self, plan: ThreadPlan, notice: NoticeSink) -> ThreadPlan:
        ttl = self.lease_ttl

        async def renew() -> None:
            while True:
                await asyncio.sleep(ttl / 3)
                try:
                    plan.lease = await self.host.store.renew_lease(plan.lease, ttl)
                except ThreadLeaseLostError as exc:
                    self._notice(
                        notice,
                        NoticeKind.THREAD_OWNERSHIP.value,
                        f"thread {self.key!r}: the lease was lost to another owner",
                        {"event": "lease_lost", "error": f"{type(exc).__name__}: {exc}"},
                    )
                    return
                except Exception:  # a transient store error (a locked file): try again next period
                    continue

        plan.renew_task = asyncio.get_running_loop().create_task(renew())
        return plan

    def fall_back(self, plan: ThreadPlan, reason: str, detail: str, notice: NoticeSink) -> None:
        """Start a fresh session once, with bounded recovery context, and say so with a thread.continuity notice."""
        plan.resume = None
        plan.fork = False
        plan.fresh_after_continuity = True
        plan.prefix = recovery_prefix(plan.record)
        self._notice(
            notice,
            NoticeKind.THREAD_CONTINUITY.value,
            f"started a fresh session for thread {self.key!r}: {detail}",
            {"reason": reason, "detail": detail, "recovery_bytes": len(plan.prefix.encode())},
        )

    def checkpoint_for(self, plan: ThreadPlan | None, run_id: str, outcome: DriverOutcome) -> Checkpoint | None:
        if not outcome.session_id or plan is None:
            return None
        return Checkpoint(
            session_id=outcome.session_id,
            driver=self.host.driver.name,
            fingerprint=plan.fingerprint,
            run_id=run_id,
            created_at=time.time(),
            data=dict(outcome.checkpoint_data),
        )

    def abandon(self, run_id: str) -> None:
        if self.state.active == run_id:
            self.state.active = None

    async def finish(
        self,
        plan: ThreadPlan,
        run_id: str,
        result: Result | None,
        error: BaseException | None,
        *,
        outcome: DriverOutcome | None,
        delivered: Sequence[MessageOutcome],
        receipts: Mapping[str, float],
        notice: NoticeSink,
    ) -> None:
        """Persist under the lease: a new checkpoint only after a healthy success; always release the lease."""
        st = self.state
        store = self.host.store
        if plan.renew_task is not None:
            plan.renew_task.cancel()
        try:
            if plan.duplicate:
                return
            healthy = self._healthy_checkpoint(plan, run_id, result, error, outcome)
            if healthy is not None:
                st.pending_checkpoint = healthy
            from ..threadstore._protocol import FinalizeRequest, HistoryEntry

            history: list[HistoryEntry] = []
            now = time.time()
            for m in delivered:
                if m.author.kind is AuthorKind.HUMAN:
                    history.append(HistoryEntry("guidance", m.text[:HISTORY_TEXT_LIMIT], now))
            if result is not None and result.text:
                history.append(HistoryEntry("assistant", result.text[:HISTORY_TEXT_LIMIT], now))
            usage = result.usage if result is not None else None
            req = FinalizeRequest(
                driver=self.host.driver.name,
                fingerprint=plan.fingerprint if (healthy is not None or plan.record is None) else "",
                checkpoint=st.pending_checkpoint,
                archive_previous=plan.fresh_after_continuity and healthy is not None,
                require_absent=plan.fork,
                receipts=dict(receipts),
                history=tuple(history),
                status="ok"
                if error is None
                else ("cancelled" if getattr(error, "reason", None) == "cancelled" else "failed"),
                run_id=run_id,
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
            await self._persist(plan, req, notice)
            if plan.fork and error is None:
                self._forked = True
        finally:
            try:
                await store.release_lease(plan.lease)
            except Exception as exc:
                self._notice(
                    notice,
                    NoticeKind.THREAD_OWNERSHIP.value,
                    f"thread {self.key!r}: releasing the lease failed; it expires by itself",
                    {"event": "release_failed", "error": f"{type(exc).__name__}: {exc}"},
                )
            if st.active == run_id:
                st.active = None

    def _healthy_checkpoint(
        self,
        plan: ThreadPlan,
        run_id: str,
        result: Result | None,
        error: BaseException | None,
        outcome: DriverOutcome | None,
    ) -> Checkpoint | None:
        if error is not None or result is None or outcome is None:
            return None
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
            driver=self.host.driver.name,
            fingerprint=plan.fingerprint,
            run_id=run_id,
            created_at=time.time(),
            data=dict(outcome.checkpoint_data),
        )

    async def _persist(self, plan: ThreadPlan, req: FinalizeRequest, notice: NoticeSink) -> None:
        st = self.state
        store = self.host.store
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
                    notice,
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
                    notice,
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
            notice,
            NoticeKind.THREAD_PERSISTENCE.value,
            f"thread {self.key!r} was not saved; the newest checkpoint stays in this process for the next run",
            {"error": f"{type(last).__name__}: {last}", "retained_in_process": True, "final": True},
        )
        from ..threadstore._errors import ThreadStoreError

        if isinstance(last, ThreadAlreadyExistsError | ThreadStoreError):
            raise last  # a store that cannot be used (its server gone, its file damaged) fails the run, naming it


def _merge_requests(old: FinalizeRequest, new: FinalizeRequest) -> FinalizeRequest:
    """Fold an unsaved earlier request into the next one so receipts, history and usage are not lost."""
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
