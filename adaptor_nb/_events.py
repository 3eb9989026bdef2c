"""Event types of a run. Drivers create payloads; the core's broker stamps ``meta`` (sequence, time, ids)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ._enums import (
    Boundary,
    FailureReason,
    MessageFailure,
    MessageState,
    NoticeKind,
    Phase,
    ProcessKind,
    Role,
    SubagentKind,
    well_known,
)
from ._result import Result, TranscriptItem, Usage

if TYPE_CHECKING:
    from ._errors import AdaptorError

E = TypeVar("E", bound="Event")


@dataclass(frozen=True)
class EventSourceMeta:
    """Provider-native coordinates of an event, kept for audit."""

    run_id: str = ""
    thread_id: str = ""
    turn_id: str = ""
    sequence: int = 0
    timestamp: str = ""


@dataclass(frozen=True)
class EventMeta:
    """Where an event sits: run, thread, per-run sequence (assigned by the core), time, turn.

    ``timestamp`` is seconds since the epoch; ``time`` gives it as an aware datetime (UTC).
    """

    run_id: str = ""
    thread_key: str = ""
    sequence: int = 0
    timestamp: float = 0.0
    turn_id: str = ""
    source: EventSourceMeta | None = None

    @property
    def time(self) -> datetime:
        return datetime.fromtimestamp(self.timestamp, UTC)


EMPTY_META = EventMeta()


@dataclass(frozen=True)
class Event:
    """Base of every event; ``meta`` is stamped by the core when the event is published."""

    meta: EventMeta = field(default=EMPTY_META, kw_only=True, compare=False)


@dataclass(frozen=True)
class TextDelta(Event):
    """Streamed assistant (or user) text."""

    text: str = ""
    message_id: str = ""
    role: Role = Role.ASSISTANT
    phase: Phase = Phase.CONTENT


@dataclass(frozen=True)
class Thinking(Event):
    """Streamed reasoning text."""

    text: str = ""
    message_id: str = ""
    phase: Phase = Phase.CONTENT


@dataclass(frozen=True)
class ToolCall(Event):
    """A tool call: START with name, CONTENT with argument deltas, END with full arguments."""

    id: str = ""
    name: str = ""
    args: dict[str, Any] | None = None
    args_delta: str = ""
    result: dict[str, Any] | None = None
    phase: Phase = Phase.START
    details: dict[str, Any] = field(default_factory=dict)
    """Extra facts: ``host_tool`` is True for the Agent's own Python tools."""


@dataclass(frozen=True)
class ToolResult(Event):
    """The outcome of a tool call."""

    id: str = ""
    result: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False
    name: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    """Extra facts: ``host_tool`` is True for the Agent's own Python tools."""


@dataclass(frozen=True)
class RunStarted(Event):
    """The run started (lifecycle identifiers)."""

    run_id: str = ""
    thread_id: str = ""


@dataclass(frozen=True)
class RunFinished(Event):
    """Informational end of the provider run; Done is the authoritative end."""

    run_id: str = ""
    thread_id: str = ""
    usage: Usage | None = None
    failed: bool = False
    reason: FailureReason | None = None
    message: str = ""


@dataclass(frozen=True)
class MessageUpdate(Event):
    """A supplemental message changed state."""

    id: str = ""
    state: MessageState = MessageState.ACCEPTED
    turn: int = 0
    boundary: Boundary | str = ""
    mechanism: str = ""
    reason: MessageFailure = MessageFailure.NONE
    text: str = ""

    def __post_init__(self) -> None:
        if self.boundary and not isinstance(self.boundary, Boundary):
            object.__setattr__(self, "boundary", well_known(Boundary, self.boundary))


@dataclass(frozen=True)
class TurnEnd(Event):
    """One provider turn ended (not proof of checkpoint persistence)."""

    turn: int = 0
    result: Result | None = None
    err: AdaptorError | None = None
    message_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Done(Event):
    """The authoritative last event: exactly what ``Stream.result()`` returns or raises."""

    result: Result | None = None
    err: BaseException | None = None


@dataclass(frozen=True)
class ProcessInfo(Event):
    """Provider process lifecycle and raw output chunks."""

    kind: ProcessKind = ProcessKind.SPAWN
    text: str = ""
    bytes: bytes = b""
    metadata: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Notice(Event):
    """Diagnostics, lifecycle notes and well-known notices (limit.approaching, thread.continuity, ...).

    ``kind`` is a ``NoticeKind`` for the well-known kinds (given as the enum or as its string) and the string itself
    for a driver's own kinds (``"claude.protocol_error"``).
    """

    kind: NoticeKind | str = NoticeKind.LIFECYCLE
    text: str = ""
    item: TranscriptItem | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.kind, NoticeKind):
            object.__setattr__(self, "kind", well_known(NoticeKind, self.kind))


@dataclass(frozen=True)
class Dropped(Event):
    """Ordinary events were dropped under backpressure; one per drop window."""

    count: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    first_sequence: int = 0
    last_sequence: int = 0
    reason: str = ""
    source: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SubagentUpdate(Event):
    """Progress of a subagent (Claude Task/Agent tool, Codex collab calls, ...)."""

    task: str = ""
    member: str = ""
    state: str = ""
    summary: str = ""
    kind: SubagentKind = SubagentKind.STATE
    delta: str = ""
    data: dict[str, Any] = field(default_factory=dict)


PlanStatus = Literal["pending", "in_progress", "completed"]
CapabilityKind = Literal["skill", "subagent", "web_search", "mcp_tool", "other"]

_STATUS_WORDS: dict[str, PlanStatus] = {
    "pending": "pending",
    "todo": "pending",
    "not_started": "pending",
    "notstarted": "pending",
    "open": "pending",
    "queued": "pending",
    "in_progress": "in_progress",
    "inprogress": "in_progress",
    "active": "in_progress",
    "running": "in_progress",
    "started": "in_progress",
    "doing": "in_progress",
    "completed": "completed",
    "complete": "completed",
    "done": "completed",
    "finished": "completed",
    "cancelled": "completed",
    "canceled": "completed",
    "skipped": "completed",
    "failed": "completed",
}


def plan_status(raw: object) -> PlanStatus:
    """The plan status nearest to a provider's word (``inProgress``, ``done``, ``cancelled``...), else pending."""
    word = str(raw or "").strip().lower().replace("-", "_").replace(" ", "_")
    return _STATUS_WORDS.get(word) or _STATUS_WORDS.get(word.replace("_", ""), "pending")


@dataclass(frozen=True)
class PlanItem:
    """One entry of a plan or todo list.

    ``status`` is one of ``"pending"``, ``"in_progress"``, ``"completed"``; a provider's other words are mapped to
    the nearest of them and kept as given in ``raw_status`` (empty when the provider used one of the three).
    """

    text: str = ""
    status: PlanStatus = "pending"
    priority: str | None = None
    id: str | None = None
    raw_status: str = ""

    def __post_init__(self) -> None:
        if self.status not in ("pending", "in_progress", "completed"):
            object.__setattr__(self, "raw_status", self.raw_status or str(self.status))
            object.__setattr__(self, "status", plan_status(self.status))


@dataclass(frozen=True)
class PlanUpdate(Event):
    """The agent's whole current plan or todo list, each time it changes.

    ``revision`` counts the updates of one run: 1, 2, 3... (the core numbers them in the order they are emitted).
    ``source`` says where the plan came from (``"claude.TodoWrite"``, ``"codex.plan"``, ``"acp.plan"``...).
    """

    items: tuple[PlanItem, ...] = ()
    revision: int = 0
    source: str = ""
    explanation: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.items, tuple):
            object.__setattr__(self, "items", tuple(self.items))


@dataclass(frozen=True)
class CapabilityStart(Event):
    """The agent began using a capability (a skill, a subagent, web search, an MCP tool).

    ``scope`` pairs it with its ``CapabilityEnd``; ``input`` is JSON data as the provider gave it. Every start is
    ended: a run that ends with capabilities still open ends each of them with ``ok=False``.
    """

    kind: CapabilityKind = "other"
    name: str = ""
    scope: str = ""
    input: Any = None


@dataclass(frozen=True)
class CapabilityEnd(Event):
    """The end of a capability use begun by the ``CapabilityStart`` of the same ``scope``."""

    kind: CapabilityKind = "other"
    name: str = ""
    scope: str = ""
    output: Any = None
    ok: bool = True


def with_meta(event: E, meta: EventMeta) -> E:
    """A copy of ``event`` with ``meta`` replaced (used by the broker and by replays)."""
    # Events are frozen dataclasses without slots whose __post_init__ (if any) only normalises field values, which the
    # instance already holds, so copying the instance dict is exact and much cheaper than dataclasses.replace (this
    # runs once per published event).
    new = object.__new__(type(event))
    new.__dict__.update(event.__dict__)
    new.__dict__["meta"] = meta
    return new


_new = object.__new__
_set = object.__setattr__
_ASSISTANT = Role.ASSISTANT
_CONTENT = Phase.CONTENT


def text_delta(text: str, message_id: str = "") -> TextDelta:
    """``TextDelta(text=..., message_id=...)`` built without the frozen-dataclass init (for drivers' hot paths)."""
    ev = _new(TextDelta)
    _set(
        ev,
        "__dict__",
        {"meta": EMPTY_META, "text": text, "message_id": message_id, "role": _ASSISTANT, "phase": _CONTENT},
    )
    return ev


_CONTENT_TYPES = (TextDelta, Thinking, ToolCall)
_RAW_KINDS = (ProcessKind.STDOUT, ProcessKind.STDERR)


def is_droppable(event: Event) -> bool:
    """Only content deltas, raw output chunks and subagent deltas may be dropped under backpressure."""
    if isinstance(event, _CONTENT_TYPES):
        return event.phase is _CONTENT
    if isinstance(event, ProcessInfo):
        return event.kind in _RAW_KINDS
    if isinstance(event, SubagentUpdate):
        return event.kind is SubagentKind.DELTA
    return False


def event_kind(event: Event) -> str:
    """A short name for counting events by kind."""
    return type(event).__name__
