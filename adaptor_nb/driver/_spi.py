"""The Driver SPI: what a driver declares, receives (Invocation, RunContext) and returns (DriverOutcome)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .._approvals import Choice, Decision
from .._enums import (
    ApprovalKind,
    ApprovalMode,
    AuthorKind,
    Boundary,
    ContinueMode,
    FailureReason,
    FeatureLevel,
    MessageFailure,
    QuestionMode,
    SandboxLevel,
    Timing,
)
from .._events import Event
from .._images import ImageInput
from .._policy import Author, Identity, Policy
from .._result import TranscriptItem, Usage
from ..mcp import Server as MCPServer
from ._hosted import HostedTools
from ._probe import EnvironmentStatus as EnvironmentStatus

ALL_APPROVAL_MODES = frozenset({ApprovalMode.ASK, ApprovalMode.AUTO_APPROVE, ApprovalMode.AUTO_DENY})
ALL_QUESTION_MODES = frozenset({QuestionMode.ASK, QuestionMode.AUTO_DENY})


@dataclass(frozen=True)
class MessageCapabilities:
    """Where and how a driver delivers supplemental messages."""

    boundaries: frozenset[Boundary] = frozenset()
    interrupt: bool = False
    continue_mode: ContinueMode = ContinueMode.NONE
    confirmed_delivery: bool = False
    persists_delivered: bool = False
    max_units: int = 0
    unit: str = ""
    min_version: str = ""

    @property
    def supported(self) -> bool:
        return bool(self.boundaries) or self.interrupt


@dataclass(frozen=True)
class ApprovalCapabilities:
    """Which decision kinds a driver can raise and which modes it honours for each."""

    kinds: frozenset[ApprovalKind] = frozenset()
    permission_modes: frozenset[ApprovalMode] = frozenset()
    plan_review_modes: frozenset[ApprovalMode] = frozenset()
    question_modes: frozenset[QuestionMode] = frozenset()
    retry: bool = False


FULL_APPROVALS = ApprovalCapabilities(
    kinds=frozenset(ApprovalKind),
    permission_modes=ALL_APPROVAL_MODES,
    plan_review_modes=ALL_APPROVAL_MODES,
    question_modes=ALL_QUESTION_MODES,
    retry=True,
)
"""Every decision kind in every mode (for drivers that route every provider request through the core)."""


@dataclass(frozen=True)
class PolicyCapabilities:
    """Explicit policy values a driver can enforce (inherit is always accepted)."""

    sandbox: frozenset[SandboxLevel] = frozenset()
    web_search: frozenset[FeatureLevel] = frozenset()
    browser: frozenset[FeatureLevel] = frozenset()


@dataclass(frozen=True)
class StructuredOutputCapabilities:
    """Whether the provider enforces a JSON schema itself (native) or the core must prompt for JSON."""

    native: bool = False
    prompted: bool = True


@dataclass(frozen=True)
class Descriptor:
    """A truthful declaration of what a driver can do; the core checks requests against it before launch."""

    name: str
    provider: str
    messages: MessageCapabilities = field(default_factory=MessageCapabilities)
    approvals: ApprovalCapabilities = field(default_factory=ApprovalCapabilities)
    policy: PolicyCapabilities = field(default_factory=PolicyCapabilities)
    structured_output: StructuredOutputCapabilities = field(default_factory=StructuredOutputCapabilities)
    resume: bool = False
    fork: bool = False
    persistent: bool = False
    scripted: bool = False
    mcp: frozenset[str] = frozenset()
    """MCP transports the driver can attach (``"stdio"``, ``"http"``, ``"sse"``); empty means no MCP support."""
    host_tools: bool = False
    """The driver attaches the Agent's host tools (``Invocation.tools``); without it ``tools=`` is refused before
    launch."""
    host_tools_channel: bool = False
    """The driver serves host tools over its CLI's own channel (``HostedTools.serve``), so its runs never start the
    Agent's loopback HTTP server (no port, no token)."""
    images: bool = False
    """The driver hands ``Invocation.images`` (PNG/JPEG) to its CLI with the prompt; without it ``images=`` is
    refused before launch."""


@dataclass(frozen=True)
class OutputSchema:
    """The JSON schema a run must answer with; ``native`` says the driver should enforce it itself."""

    schema: dict[str, Any]
    name: str = "output"
    description: str = ""
    native: bool = False


@dataclass(frozen=True)
class Checkpoint:
    """A healthy resume point of a Thread: the provider session and the compatibility fingerprint."""

    session_id: str
    driver: str
    fingerprint: str
    run_id: str = ""
    created_at: float = 0.0
    data: dict[str, Any] = field(default_factory=dict)


class ProcessSlot:
    """A place where a driver parks a persistent provider process for one Thread; the core closes it."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.value: Any = None
        self.fingerprint: str = ""
        self._closer: Callable[[], Awaitable[None]] | None = None

    def attach(self, value: Any, fingerprint: str, closer: Callable[[], Awaitable[None]]) -> None:
        """Keep ``value`` for the next run of this Thread; ``closer`` reaps it."""
        self.value = value
        self.fingerprint = fingerprint
        self._closer = closer

    def detach(self) -> None:
        """Forget the process without closing it (the driver already did)."""
        self.value = None
        self.fingerprint = ""
        self._closer = None

    async def close(self) -> None:
        """Reap the parked process, if any."""
        closer, self._closer = self._closer, None
        self.value = None
        self.fingerprint = ""
        if closer is not None:
            try:
                await closer()
            except BaseException:
                if self._closer is None:  # incomplete cleanup stays retryable by a later close()
                    self._closer = closer
                raise


@dataclass(frozen=True)
class Invocation:
    """One execution request, resolved by the core from Agent defaults and call options."""

    run_id: str
    prompt: str
    thread_key: str = ""
    model: str = ""
    instructions: str = ""
    """Extra instructions, resolved: the run's ``instructions``, the profile's, then its ``append_instructions``.
    A driver adds them to the CLI's own system prompt (or ahead of a fresh session's first prompt), never replacing
    it."""
    workspace: str = ""
    timeout: float | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    identity: Identity = field(default_factory=Identity)
    policy: Policy = field(default_factory=Policy)
    output_schema: OutputSchema | None = None
    resume: Checkpoint | None = None
    fork: bool = False
    spawn: bool = False
    slot: ProcessSlot | None = None
    max_turns: int = 20
    env: dict[str, str] = field(default_factory=dict)
    mcp: tuple[MCPServer, ...] | None = None
    """The resolved MCP servers, already validated: None leaves the CLI's own MCP setup alone, ``()`` clears it."""
    tools: HostedTools | None = None
    """The Agent's host tools (``tools=[...]``): attach this server whatever ``mcp`` says; None: no host tools."""
    images: tuple[ImageInput, ...] = ()
    """Images sent with ``prompt`` (already read and typed); only given to drivers that declare ``images``."""


@dataclass(frozen=True)
class ClaimedMessage:
    """A supplemental message a driver has claimed for delivery; acknowledge it exactly once."""

    id: str
    text: str
    original: str
    author: Author
    timing: Timing
    possible_duplicate: bool = False
    attempt: int = 0

    @property
    def from_human(self) -> bool:
        return self.author.kind is AuthorKind.HUMAN


class MessagePort(Protocol):
    """The driver's door to queued supplemental messages."""

    def pending(self, boundary: Boundary) -> int:
        """How many queued messages could be claimed at ``boundary`` now."""
        ...

    def claim(self, boundary: Boundary, limit: int | None = None) -> list[ClaimedMessage]:
        """Take messages deliverable at ``boundary``; each must then be delivered, failed or requeued once."""
        ...

    def delivered(self, message: ClaimedMessage, *, boundary: Boundary, mechanism: str) -> None: ...

    def failed(self, message: ClaimedMessage, reason: MessageFailure) -> None: ...

    def requeue(self, message: ClaimedMessage, *, possible_duplicate: bool = False) -> None: ...

    async def wait(self, boundaries: frozenset[Boundary] | None = None) -> None:
        """Return when a message is (or becomes) claimable at one of ``boundaries`` (default: any)."""
        ...

    def watch(self, boundaries: frozenset[Boundary], callback: Callable[[], None]) -> Callable[[], None]:
        """``wait`` without a task: call ``callback`` once, when a message is (or becomes) claimable at one of
        ``boundaries`` (default: any). Returns a function that stops watching."""
        ...


@dataclass(frozen=True)
class ApprovalSpec:
    """What a driver needs decided."""

    kind: ApprovalKind
    title: str
    tool_call_id: str = ""
    choices: tuple[Choice, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    provider_request_id: str = ""


class ApprovalPort(Protocol):
    """Ask the core for a decision; it applies the policy (ask, auto, timeout, fallbacks)."""

    async def request(self, spec: ApprovalSpec) -> Decision:
        """Return the decision; raises an internal abort when the policy ends the run."""
        ...

    def withdraw(self, provider_request_id: str) -> None:
        """The provider cancelled a pending request: expire it."""
        ...


class RunContext(Protocol):
    """What the core gives a running driver: the event sink, raw capture, turn accounting and the ports."""

    @property
    def run_id(self) -> str: ...

    @property
    def thread_key(self) -> str: ...

    @property
    def messages(self) -> MessagePort | None:
        """The message port, or None when supplemental messages are off for this run."""
        ...

    @property
    def approvals(self) -> ApprovalPort: ...

    def emit(self, event: Event) -> Awaitable[None]:
        """Publish an event: ``await ctx.emit(event)``.

        The core stamps meta; an ordinary event may wait under blocking backpressure. When the event can be
        published at once it is, inside the call, and the awaitable returned is already finished (awaiting it costs
        nothing), so a driver's per-token loop needs no other method.
        """
        ...

    def emit_many(self, events: Iterable[Event]) -> Awaitable[None]:
        """Publish ``events`` in order: ``await ctx.emit_many(events)``; the same as emitting each in turn.

        For a block of text deltas read together pass ``TextDeltas(texts, message_id, meta)``: the texts are
        published in one loop without building an event for each, as far as that needs no waiting.
        """
        ...

    def raw_stdout(self, data: bytes) -> None: ...

    def raw_stderr(self, data: bytes) -> None: ...

    def terminal(self, event: str, payload: Any) -> None: ...

    def transcript(self, item: TranscriptItem) -> None: ...

    def set_turn_id(self, turn_id: str) -> None: ...

    @property
    def turns(self) -> int:
        """Completed turns so far."""
        ...

    async def turn_end(self, *, usage: Usage | None = None, text: str | None = None) -> bool:
        """Record a finished provider turn; returns whether another turn may start (turn limit)."""
        ...


@dataclass
class DriverOutcome:
    """What a driver reports when a run ends without raising."""

    text: str | None = None
    model: str = ""
    provider: str = ""
    usage: Usage | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    structured: Any = None
    has_structured: bool = False
    session_id: str = ""
    healthy: bool = True
    failure: DriverFailure | None = None
    checkpoint_data: dict[str, Any] = field(default_factory=dict)


class DriverFailure(Exception):
    """A classified provider failure; the core turns it into a RunError carrying the partial result."""

    def __init__(
        self,
        message: str,
        *,
        reason: FailureReason = FailureReason.AGENT_ERROR,
        details: dict[str, Any] | None = None,
        session_id: str = "",
        retryable: bool = False,
        retry_after: float | None = None,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.cause = cause
        self.details: dict[str, Any] = dict(details or {})
        self.session_id = session_id
        self.retryable = retryable
        self.retry_after = retry_after


@dataclass(frozen=True)
class EnvironmentCheck:
    """One line of an environment probe."""

    name: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class EnvironmentReport:
    """What Inspect found about a driver's CLI without starting a model task."""

    driver: str
    status: EnvironmentStatus
    version: str = ""
    command: tuple[str, ...] = ()
    auth_source: str = ""
    checks: tuple[EnvironmentCheck, ...] = ()
    messages: MessageCapabilities | None = None

    def __post_init__(self) -> None:
        # A plain string (an older driver's "ok") becomes the enum; an unknown word is refused by name.
        if not isinstance(self.status, EnvironmentStatus):
            object.__setattr__(self, "status", EnvironmentStatus(str(self.status)))


@dataclass(frozen=True)
class ModelInfo:
    """A model the provider offers."""

    id: str
    name: str = ""
    default: bool = False


@runtime_checkable
class SessionCodec(Protocol):
    """Turns a provider session id into a stored token and back; the round trip must be exact."""

    def encode(self, session_id: str) -> str: ...

    def decode(self, token: str) -> str: ...


class Driver(Protocol):
    """A provider integration. Drivers own their CLI process and wire protocol; the core owns everything else."""

    @property
    def name(self) -> str: ...

    def descriptor(self) -> Descriptor: ...

    def validate_config(self) -> None:
        """Raise InvalidDriverConfigError (naming the field) before any process starts."""
        ...

    def config_fingerprint(self) -> str:
        """A stable string that changes when the configuration would make a resumed session incompatible."""
        ...

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome: ...


@runtime_checkable
class EnvironmentProbe(Protocol):
    async def probe_environment(self) -> EnvironmentReport: ...


@runtime_checkable
class ModelLister(Protocol):
    async def list_models(self) -> list[ModelInfo]: ...


class IdentityCodec:
    """The trivial session codec for providers whose session ids are opaque strings."""

    def encode(self, session_id: str) -> str:
        return session_id

    def decode(self, token: str) -> str:
        return token
