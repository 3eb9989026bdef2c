"""Policy, identity and author values, with their defaults and validation."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ._enums import (
    ApprovalMode,
    AuthorKind,
    FallbackAction,
    FeatureLevel,
    QuestionMode,
    SandboxLevel,
    Timing,
)
from ._errors import InvalidPolicyError

DEFAULT_MAX_PENDING = 32
DEFAULT_MAX_TURNS = 20
DEFAULT_APPROVAL_TIMEOUT = 30.0
DEFAULT_MAX_RETRIES = 3


@dataclass(frozen=True)
class Identity:
    """Who a run is for; scopes host resource lookups."""

    id: str = ""
    tenant: str = ""
    profile: str = ""
    name: str = ""


@dataclass(frozen=True)
class Author:
    """The sender of a message: a human, a peer agent or the system."""

    kind: AuthorKind = AuthorKind.HUMAN
    id: str = ""
    name: str = ""


@dataclass(frozen=True)
class MessageContext:
    """What a message formatter sees: the original text and who sent it when."""

    id: str
    text: str
    author: Author
    timing: Timing


@dataclass(frozen=True)
class MessagePolicy:
    """Rules for supplemental messages: framing, queue size and turn budget."""

    disabled: bool = False
    format: Callable[[MessageContext], str] | None = None
    max_pending: int = 0
    max_turns: int = 0

    @property
    def effective_max_pending(self) -> int:
        return self.max_pending or DEFAULT_MAX_PENDING

    @property
    def effective_max_turns(self) -> int:
        return self.max_turns or DEFAULT_MAX_TURNS


@dataclass(frozen=True)
class ApprovalPolicy:
    """How human decisions are asked for, and what happens on timeout or rejection.

    ``timeout`` is in seconds; ``None`` means the default (30 s); a negative value removes the deadline.
    """

    permission: ApprovalMode = ApprovalMode.INHERIT
    plan_review: ApprovalMode = ApprovalMode.INHERIT
    question: QuestionMode = QuestionMode.INHERIT
    timeout: float | None = None
    on_timeout: FallbackAction = FallbackAction.INHERIT
    on_reject: FallbackAction = FallbackAction.INHERIT
    max_retries: int | None = None

    def resolved(self) -> ApprovalPolicy:
        """The same policy with every inherit value replaced by its default."""
        return ApprovalPolicy(
            permission=self.permission if self.permission is not ApprovalMode.INHERIT else ApprovalMode.ASK,
            plan_review=self.plan_review if self.plan_review is not ApprovalMode.INHERIT else ApprovalMode.ASK,
            question=self.question if self.question is not QuestionMode.INHERIT else QuestionMode.AUTO_DENY,
            timeout=DEFAULT_APPROVAL_TIMEOUT if self.timeout is None else self.timeout,
            on_timeout=self.on_timeout if self.on_timeout is not FallbackAction.INHERIT else FallbackAction.ABORT,
            on_reject=self.on_reject if self.on_reject is not FallbackAction.INHERIT else FallbackAction.ABORT,
            max_retries=DEFAULT_MAX_RETRIES if self.max_retries is None else self.max_retries,
        )

    @property
    def deadline_seconds(self) -> float | None:
        """Seconds until a request expires, or None for no deadline."""
        t = DEFAULT_APPROVAL_TIMEOUT if self.timeout is None else self.timeout
        return None if t < 0 else t


@dataclass(frozen=True)
class Policy:
    """Everything a run is allowed to do; replaced whole by a nearer scope."""

    messages: MessagePolicy = field(default_factory=MessagePolicy)
    sandbox: SandboxLevel = SandboxLevel.INHERIT
    web_search: FeatureLevel = FeatureLevel.INHERIT
    browser: FeatureLevel = FeatureLevel.INHERIT
    approvals: ApprovalPolicy = field(default_factory=ApprovalPolicy)

    def with_approvals(self, approvals: ApprovalPolicy) -> Policy:
        return replace(self, approvals=approvals)


POLICY_READ_ONLY = Policy(sandbox=SandboxLevel.READ_ONLY)
POLICY_WORKSPACE_WRITE = Policy(sandbox=SandboxLevel.WORKSPACE_WRITE)
POLICY_UNRESTRICTED = Policy(sandbox=SandboxLevel.UNRESTRICTED)
APPROVALS_AUTO_DENY = ApprovalPolicy(
    permission=ApprovalMode.AUTO_DENY, plan_review=ApprovalMode.AUTO_DENY, question=QuestionMode.AUTO_DENY
)
APPROVALS_AUTO_APPROVE = ApprovalPolicy(
    permission=ApprovalMode.AUTO_APPROVE,
    plan_review=ApprovalMode.AUTO_APPROVE,
    question=QuestionMode.AUTO_DENY,
)


def validate_policy(policy: Policy) -> None:
    """Raise InvalidPolicyError naming the first malformed field."""
    if not isinstance(policy, Policy):
        raise InvalidPolicyError(f"policy must be a Policy, got {type(policy).__name__}", option="policy")
    m = policy.messages
    checks: list[tuple[str, object, type]] = [
        ("policy.sandbox", policy.sandbox, SandboxLevel),
        ("policy.web_search", policy.web_search, FeatureLevel),
        ("policy.browser", policy.browser, FeatureLevel),
        ("policy.approvals.permission", policy.approvals.permission, ApprovalMode),
        ("policy.approvals.plan_review", policy.approvals.plan_review, ApprovalMode),
        ("policy.approvals.question", policy.approvals.question, QuestionMode),
        ("policy.approvals.on_timeout", policy.approvals.on_timeout, FallbackAction),
        ("policy.approvals.on_reject", policy.approvals.on_reject, FallbackAction),
    ]
    for name, value, enum_type in checks:
        if not isinstance(value, enum_type):
            raise InvalidPolicyError(f"{name} must be a {enum_type.__name__}, got {value!r}", option=name)
    if not isinstance(m, MessagePolicy):
        raise InvalidPolicyError("policy.messages must be a MessagePolicy", option="policy.messages")
    for name, value in (("max_pending", m.max_pending), ("max_turns", m.max_turns)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InvalidPolicyError(
                f"policy.messages.{name} must be a non-negative int (0 means the default), got {value!r}",
                option=f"policy.messages.{name}",
            )
    if m.format is not None and not callable(m.format):
        raise InvalidPolicyError("policy.messages.format must be callable or None", option="policy.messages.format")
    a = policy.approvals
    if a.max_retries is not None and (not isinstance(a.max_retries, int) or a.max_retries < 0):
        raise InvalidPolicyError(
            f"policy.approvals.max_retries must be >= 0, got {a.max_retries!r}",
            option="policy.approvals.max_retries",
        )
    if a.timeout is not None and (not isinstance(a.timeout, int | float) or math.isnan(a.timeout)):
        raise InvalidPolicyError(
            f"policy.approvals.timeout must be seconds (negative = no deadline), got {a.timeout!r}",
            option="policy.approvals.timeout",
        )
