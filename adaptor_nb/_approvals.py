"""Approval requests: the live event a human answers exactly once, and the values a driver gets back."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from ._enums import ApprovalKind
from ._errors import (
    ApprovalExpiredError,
    ApprovalKindMismatchError,
    ApprovalResolvedError,
    ApprovalUnavailableError,
)
from ._events import Event

DecisionAction = Literal["approve", "deny", "answer"]


@dataclass(frozen=True)
class Choice:
    """One option offered by a request (a question's answer, or a decision variant)."""

    key: str
    label: str = ""
    description: str = ""


@dataclass(frozen=True)
class Decision:
    """How a request was resolved."""

    action: DecisionAction
    reason: str = ""
    answer: str = ""
    by: str = "human"
    interrupt: bool = False

    @property
    def allowed(self) -> bool:
        return self.action in ("approve", "answer")


@dataclass(frozen=True)
class Origin:
    """Attribution of a forwarded request (zero for a single Agent)."""

    member: str = ""
    task: str = ""


class Responder:
    """Resolves one request exactly once, from any thread; shared by forwarded copies."""

    def __init__(self, request_id: str, kind: ApprovalKind, loop: asyncio.AbstractEventLoop) -> None:
        self.request_id = request_id
        self.kind = kind
        self._loop = loop
        self._lock = threading.Lock()
        self._state: Literal["pending", "resolved", "expired"] = "pending"
        self.future: asyncio.Future[Decision] = loop.create_future()
        self.decision: Decision | None = None

    @property
    def state(self) -> str:
        return self._state

    def resolve(self, decision: Decision) -> None:
        """Apply ``decision`` or raise if already resolved/expired. Thread-safe."""
        with self._lock:
            if self._state == "expired":
                raise ApprovalExpiredError(f"approval {self.request_id} has expired", request_id=self.request_id)
            if self._state == "resolved":
                raise ApprovalResolvedError(
                    f"approval {self.request_id} was already answered", request_id=self.request_id
                )
            self._state = "resolved"
            self.decision = decision
        self._deliver(decision)

    def expire(self, decision: Decision | None = None) -> bool:
        """Mark expired (deadline, withdrawal, run end); returns False if it was already resolved."""
        with self._lock:
            if self._state != "pending":
                return False
            self._state = "expired"
            self.decision = decision
        if decision is not None:
            self._deliver(decision)
        return True

    def _deliver(self, decision: Decision) -> None:
        def setter() -> None:
            if not self.future.done():
                self.future.set_result(decision)

        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            setter()
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(setter)


@dataclass(frozen=True)
class ApprovalRequest(Event):
    """A live request for a human decision. Answer it once with approve(), deny() or answer()."""

    id: str = ""
    run_id: str = ""
    kind: ApprovalKind = ApprovalKind.PERMISSION
    title: str = ""
    source: str = ""
    tool_call_id: str = ""
    choices: tuple[Choice, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None
    deadline: datetime | None = None
    attempt: int = 0
    origin: Origin = field(default_factory=Origin)
    _responder: Responder | None = field(default=None, repr=False, compare=False)

    def _require(self) -> Responder:
        if self._responder is None:
            raise ApprovalUnavailableError(f"approval {self.id} is not bound to a live run", request_id=self.id)
        return self._responder

    def approve(self, choice: str = "", *, by: str = "human") -> None:
        """Allow a permission or plan-review request; ``choice`` picks an offered variant (e.g. for the session).

        ``by`` names who answered (``Decision.by``; views show any value other than ``"human"``)."""
        r = self._require()
        if self.kind is ApprovalKind.QUESTION:
            raise ApprovalKindMismatchError(
                f"approval {self.id} is a question: use answer(option) or deny(reason)", request_id=self.id
            )
        if choice and choice not in {c.key for c in self.choices}:
            offered = ", ".join(c.key for c in self.choices) or "none"
            raise ValueError(f"approval {self.id} offers no choice {choice!r} (offered: {offered})")
        r.resolve(Decision("approve", answer=choice, by=by))

    def deny(self, reason: str = "", *, interrupt: bool = False, by: str = "human") -> None:
        """Deny any kind of request; ``interrupt`` also asks the provider to stop the turn."""
        self._require().resolve(Decision("deny", reason=reason, interrupt=interrupt, by=by))

    def answer(self, option: str, *, by: str = "human") -> None:
        """Answer a question with a choice key or free text."""
        r = self._require()
        if self.kind is not ApprovalKind.QUESTION:
            raise ApprovalKindMismatchError(
                f"approval {self.id} is a {self.kind.value} request: use approve() or deny()",
                request_id=self.id,
            )
        r.resolve(Decision("answer", answer=option, by=by))

    @property
    def state(self) -> str:
        """pending, resolved or expired (unbound requests say 'unbound')."""
        return self._responder.state if self._responder else "unbound"

    @property
    def decision(self) -> Decision | None:
        return self._responder.decision if self._responder else None

    def forward(self, origin: Origin) -> ApprovalRequest:
        """An attributed copy sharing the same responder; answering either resolves both."""
        return replace(self, origin=origin, choices=tuple(self.choices), details=dict(self.details))


ApprovalHandler = Callable[[ApprovalRequest], "Awaitable[None] | None"]


def approve_all() -> ApprovalHandler:
    """A handler (for ``on_approval=``) that approves binary requests and denies questions."""

    def handler(request: ApprovalRequest) -> None:
        if request.kind is ApprovalKind.QUESTION:
            request.deny("questions are denied by approve_all()")
        else:
            request.approve()

    return handler


def deny_all(reason: str = "denied by deny_all()") -> ApprovalHandler:
    """A handler (for ``on_approval=``) that denies every request with ``reason``."""

    def handler(request: ApprovalRequest) -> None:
        request.deny(reason)

    return handler
