"""Closed value sets of the API (roles, phases, message states, policy levels, ...)."""

from __future__ import annotations

from enum import Enum, IntEnum, StrEnum
from typing import TypeVar

S = TypeVar("S", bound=StrEnum)


class Role(str, Enum):
    """Who a text delta speaks for."""

    ASSISTANT = ""
    USER = "user"


class Phase(str, Enum):
    """Where a streamed part is: its start, content, or end."""

    CONTENT = ""
    START = "start"
    END = "end"


class MessageState(IntEnum):
    """Lifecycle of a supplemental message."""

    ACCEPTED = 1
    DELIVERED = 2
    FAILED = 3


class MessageFailure(str, Enum):
    """Why a supplemental message was not delivered."""

    NONE = ""
    CANCELLED = "cancelled"
    PROVIDER_REJECTED = "provider_rejected"
    TIMEOUT = "timeout"
    LIMIT_EXCEEDED = "limit_exceeded"
    RUN_FAILED = "run_failed"


class Timing(IntEnum):
    """When a supplemental message should reach the agent."""

    SOON = 0
    INTERRUPT = 1
    AFTER_TURN = 2


class AuthorKind(IntEnum):
    """Whose authority a message carries."""

    HUMAN = 1
    AGENT = 2
    SYSTEM = 3


class FailureReason(str, Enum):
    """Classified reason of a business failure (RunError)."""

    APPROVAL_DENIED = "approval_denied"
    APPROVAL_TIMEOUT = "approval_timeout"
    AGENT_ERROR = "agent_error"
    CANCELLED = "cancelled"
    POLICY_VIOLATION = "policy_violation"
    LIMIT_EXCEEDED = "limit_exceeded"
    INFRASTRUCTURE = "infrastructure"
    """The machinery failed, not the model: the CLI could not be started, its process died, an endpoint could not
    be reached."""
    DEADLINE_EXCEEDED = "deadline_exceeded"
    """The run's ``execution_timeout`` (time working, approval waits left out) ran out."""


class ApprovalKind(str, Enum):
    """What a human decision is about."""

    PERMISSION = "permission"
    PLAN_REVIEW = "plan_review"
    QUESTION = "question"


class SandboxLevel(str, Enum):
    """How much of the machine the agent may change."""

    INHERIT = ""
    READ_ONLY = "read_only"
    WORKSPACE_WRITE = "workspace_write"
    UNRESTRICTED = "unrestricted"


class FeatureLevel(str, Enum):
    """Allow or deny an optional provider feature (web search, browser)."""

    INHERIT = ""
    ALLOW = "allow"
    DENY = "deny"


class ApprovalMode(str, Enum):
    """How permission and plan-review requests are decided."""

    INHERIT = ""
    ASK = "ask"
    AUTO_APPROVE = "auto_approve"
    AUTO_DENY = "auto_deny"


class QuestionMode(str, Enum):
    """How questions from the agent are decided."""

    INHERIT = ""
    ASK = "ask"
    AUTO_DENY = "auto_deny"


class FallbackAction(str, Enum):
    """What happens when an approval times out or is rejected."""

    INHERIT = ""
    ABORT = "abort"
    CONTINUE = "continue"
    RETRY = "retry"


class ProcessKind(str, Enum):
    """Kinds of ProcessInfo events."""

    SPAWN = "spawn"
    STDOUT = "stdout"
    STDERR = "stderr"
    EXIT = "exit"


class SubagentKind(str, Enum):
    """Kinds of SubagentUpdate events."""

    STARTED = "started"
    DELTA = "delta"
    MESSAGE = "message"
    STATE = "state"
    FINISHED = "finished"


class NoticeKind(StrEnum):
    """Well-known Notice kinds; other kinds (a driver's own, namespaced like ``claude.protocol_error``) stay strings.

    A str enum: ``notice.kind == "thread.continuity"`` and ``notice.kind is NoticeKind.THREAD_CONTINUITY`` both hold.
    """

    INVOCATION = "invocation"
    LIFECYCLE = "lifecycle"
    RUNTIME = "runtime"
    STEP = "step"
    TRANSCRIPT_ITEM = "transcript.item"
    APPROVAL_REQUESTED = "approval.requested"
    APPROVAL_RESOLVED = "approval.resolved"
    LIMIT_APPROACHING = "limit.approaching"
    THREAD_CONTINUITY = "thread.continuity"
    THREAD_PERSISTENCE = "thread.persistence"
    THREAD_OWNERSHIP = "thread.ownership"


class Boundary(StrEnum):
    """Points in a run where a driver can deliver supplemental input (message records may also name others)."""

    IN_RUN = "in_run"
    TURN_END = "turn_end"
    INTERRUPT = "interrupt"


class ContinueMode(str, Enum):
    """How a driver continues with input that arrives at turn end."""

    NONE = "none"
    IN_RUN = "in_run"
    RESUME = "resume"


def well_known(kind: type[S], value: S | str) -> S | str:
    """``value`` as a member of the str enum ``kind`` when it is one of its values, else the string unchanged."""
    if isinstance(value, kind):
        return value
    try:
        return kind(value)
    except ValueError:
        return value
