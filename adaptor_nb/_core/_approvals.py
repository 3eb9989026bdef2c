"""The core side of approvals: applies ApprovalPolicy (modes, deadlines, fallbacks) to driver requests."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import uuid
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any

from .._approvals import ApprovalRequest, Decision, Responder
from .._enums import ApprovalKind, ApprovalMode, FailureReason, FallbackAction, NoticeKind, QuestionMode
from .._events import Notice
from .._policy import ApprovalPolicy
from ..driver._spi import ApprovalSpec
from ._broker import Broker
from ._work_clock import WorkClock


class ApprovalAbort(Exception):
    """Raised into the driver when the approval policy ends the run; the core turns it into a RunError."""

    def __init__(self, reason: FailureReason, message: str, details: dict[str, Any]) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.details = details


class CoreApprovals:
    """Implements the driver's ApprovalPort for one run."""

    def __init__(
        self,
        broker: Broker,
        policy: ApprovalPolicy,
        handler: Callable[[ApprovalRequest], Any] | None,
        *,
        run_id: str,
        retry_supported: bool = True,
        wait_for_consumer: Callable[[], Coroutine[Any, Any, None]] | None = None,
        clock: WorkClock | None = None,
    ) -> None:
        self._clock = clock  # stands still while a request waits for its answer (execution_timeout)
        self._wait_for_consumer = wait_for_consumer  # a relay (Standby) whose own consumer may not be there yet
        self._broker = broker
        self._policy = policy.resolved()
        self._handler = handler
        self._run_id = run_id
        self._retry = retry_supported
        self._pending: dict[str, Responder] = {}
        self._by_provider: dict[str, Responder] = {}
        self.audit: list[dict[str, Any]] = []

    def _mode(self, kind: ApprovalKind) -> str:
        p = self._policy
        if kind is ApprovalKind.PERMISSION:
            return p.permission.value
        if kind is ApprovalKind.PLAN_REVIEW:
            return p.plan_review.value
        return p.question.value

    def _notice(self, kind: NoticeKind, text: str, data: dict[str, Any]) -> None:
        self._broker.publish_critical(Notice(kind=kind.value, text=text, data=data))

    def _fallback(self, action: FallbackAction) -> FallbackAction:
        if action is FallbackAction.RETRY and not self._retry:
            self._notice(
                NoticeKind.LIFECYCLE,
                "approval retry is not supported by this driver; aborting instead",
                {"warning": "human_decision_retry_unsupported"},
            )
            return FallbackAction.ABORT
        return action

    async def request(self, spec: ApprovalSpec) -> Decision:
        mode = self._mode(spec.kind)
        request_id = f"apr_{uuid.uuid4().hex[:12]}"
        base = {"request_id": request_id, "kind": spec.kind.value, "title": spec.title}
        if spec.tool_call_id:
            base["tool_call_id"] = spec.tool_call_id  # lets a view put the decision by its tool
        if mode in (ApprovalMode.AUTO_APPROVE.value,):
            decision = Decision("approve", by="policy")
            self._record(base, 0, "approved", decision)
            return decision
        if mode in (ApprovalMode.AUTO_DENY.value, QuestionMode.AUTO_DENY.value):
            decision = Decision("deny", reason=f"{spec.kind.value} requests are denied by policy", by="policy")
            self._record(base, 0, "denied", decision)
            return decision
        attempt = 0
        while True:
            decision, outcome = await self._ask(spec, request_id, attempt)
            self._record(base, attempt, outcome, decision)
            if outcome in ("approved", "answered", "withdrawn"):
                return decision
            action = self._fallback(self._policy.on_timeout if outcome == "timeout" else self._policy.on_reject)
            if action is FallbackAction.RETRY and attempt < (self._policy.max_retries or 0):
                attempt += 1
                continue
            if action is FallbackAction.CONTINUE:
                return decision
            if outcome == "timeout":
                raise ApprovalAbort(
                    FailureReason.APPROVAL_TIMEOUT,
                    f"approval {spec.title!r} was not answered in time",
                    {**base, "attempt": attempt},
                )
            raise ApprovalAbort(
                FailureReason.APPROVAL_DENIED,
                f"approval {spec.title!r} was denied" + (f": {decision.reason}" if decision.reason else ""),
                {**base, "attempt": attempt, "denial_reason": decision.reason},
            )

    def _record(self, base: dict[str, Any], attempt: int, outcome: str, decision: Decision) -> None:
        data = {**base, "attempt": attempt, "outcome": outcome, "by": decision.by}
        self.audit.append(data)
        self._notice(NoticeKind.APPROVAL_RESOLVED, f"{base['kind']} {outcome}", data)

    async def _ask(self, spec: ApprovalSpec, request_id: str, attempt: int) -> tuple[Decision, str]:
        if self._clock is None:
            return await self._ask_now(spec, request_id, attempt)
        self._clock.hold()
        try:
            return await self._ask_now(spec, request_id, attempt)
        finally:
            self._clock.release()

    async def _ask_now(self, spec: ApprovalSpec, request_id: str, attempt: int) -> tuple[Decision, str]:
        loop = asyncio.get_running_loop()
        responder = Responder(request_id, spec.kind, loop)
        seconds = self._policy.deadline_seconds
        now = datetime.now(UTC)
        request = ApprovalRequest(
            id=request_id,
            run_id=self._run_id,
            kind=spec.kind,
            title=spec.title,
            source=spec.source,
            tool_call_id=spec.tool_call_id,
            choices=spec.choices,
            details=dict(spec.details),
            created_at=now,
            deadline=None if seconds is None else now + timedelta(seconds=seconds),
            attempt=attempt,
            _responder=responder,
        )
        self._pending[request_id] = responder
        if spec.provider_request_id:
            self._by_provider[spec.provider_request_id] = responder
        self._notice(
            NoticeKind.APPROVAL_REQUESTED,
            spec.title,
            {"request_id": request_id, "kind": spec.kind.value, "attempt": attempt, "outcome": "pending"},
        )
        self._broker.publish_critical(request)
        handler_task: asyncio.Task[Any] | None = None
        try:
            if self._handler is not None:
                handler_task = loop.create_task(self._run_handler(request))
            elif self._wait_for_consumer is not None:
                waiter = loop.create_task(self._wait_for_consumer())
                try:
                    either: set[asyncio.Future[Any]] = {waiter, responder.future}
                    await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
            elif not self._broker.subscribed:
                subscribed = await self._broker.wait_for_subscriber()
                if not subscribed and responder.expire():
                    self._notice(
                        NoticeKind.LIFECYCLE,
                        "approval was requested with no handler and no event subscriber; the timeout fallback "
                        "applied at once",
                        {"request_id": request_id},
                    )
                    return Decision("deny", reason="no one was listening for approvals", by="timeout"), "timeout"
            try:
                decision = await asyncio.wait_for(asyncio.shield(responder.future), seconds)
            except TimeoutError:
                if responder.expire():
                    return Decision("deny", reason="approval timed out", by="timeout"), "timeout"
                decision = await responder.future
        finally:
            self._pending.pop(request_id, None)
            if spec.provider_request_id:
                self._by_provider.pop(spec.provider_request_id, None)
            if handler_task is not None and not handler_task.done():
                handler_task.cancel()
                with contextlib.suppress(BaseException):
                    await handler_task
            if responder.state == "pending":
                responder.expire()
        if decision.by == "withdrawn":
            return decision, "withdrawn"
        if decision.action == "approve":
            return decision, "approved"
        if decision.action == "answer":
            return decision, "answered"
        return decision, "denied"

    async def _run_handler(self, request: ApprovalRequest) -> None:
        assert self._handler is not None
        try:
            out = self._handler(request)
            if inspect.isawaitable(out):
                await out
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            with contextlib.suppress(Exception):
                request.deny(f"approval handler failed: {exc}")
            self._notice(NoticeKind.LIFECYCLE, f"approval handler raised {type(exc).__name__}: {exc}", {})

    def withdraw(self, provider_request_id: str) -> None:
        r = self._by_provider.get(provider_request_id)
        if r is not None:
            r.expire(Decision("deny", reason="withdrawn by the provider", by="withdrawn"))

    def expire_all(self) -> None:
        for r in list(self._pending.values()):
            r.expire(Decision("deny", reason="the run ended", by="withdrawn"))
