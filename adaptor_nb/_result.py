"""The Result of a run and the audit values it carries (usage, transcript, raw streams, message outcomes)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from ._enums import Boundary, MessageFailure, MessageState, Timing, well_known
from ._policy import Author

if TYPE_CHECKING:
    import pandas

T = TypeVar("T")


@dataclass(frozen=True)
class Usage:
    """Token usage and estimated cost; a Usage of zeros means observed zero."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    estimated_cost_milli: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.estimated_cost_milli + other.estimated_cost_milli,
        )

    @property
    def cost_usd(self) -> float:
        """Estimated cost in US dollars."""
        return self.estimated_cost_milli / 1000.0

    @staticmethod
    def add(a: Usage | None, b: Usage | None) -> Usage | None:
        """Sum that keeps None (unobserved) apart from zero (observed zero)."""
        if a is None:
            return b
        if b is None:
            return a
        return a + b


def _normalise_boundary(record: TranscriptMessage | MessageOutcome) -> None:
    """A well-known boundary given as a string becomes the ``Boundary`` member; others ("receipt") stay strings."""
    if record.boundary and not isinstance(record.boundary, Boundary):
        object.__setattr__(record, "boundary", well_known(Boundary, record.boundary))


@dataclass(frozen=True)
class TranscriptMessage:
    """A supplemental message as delivered, recorded by the core in the transcript."""

    id: str
    author: Author
    mechanism: str
    boundary: Boundary | str
    text: str

    def __post_init__(self) -> None:
        _normalise_boundary(self)


@dataclass(frozen=True)
class TranscriptItem:
    """One normalized entry of what the provider did (text, thinking, tool use, result, ...)."""

    kind: str
    text: str = ""
    delta: bool = False
    tool_use_id: str = ""
    tool_name: str = ""
    input: Any = None
    is_error: bool = False
    model: str = ""
    session_id: str = ""
    usage: Usage | None = None
    cost_usd: float | None = None
    subtype: str = ""
    errors: tuple[str, ...] = ()
    metadata: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    message: TranscriptMessage | None = None


@dataclass(frozen=True)
class TerminalPayload:
    """The last recognized terminal frame of the provider (for example Claude's ``result`` line)."""

    event: str
    json: Any


@dataclass
class RawStreams:
    """Complete stdout/stderr across provider invocations, and the last terminal payload."""

    stdout: bytes = b""
    stderr: bytes = b""
    terminal: TerminalPayload | None = None


@dataclass(frozen=True)
class MessageOutcome:
    """Final state of one supplemental message."""

    id: str
    text: str
    author: Author
    timing: Timing
    state: MessageState
    turn: int = 0
    boundary: Boundary | str = ""
    mechanism: str = ""
    reason: MessageFailure = MessageFailure.NONE

    def __post_init__(self) -> None:
        _normalise_boundary(self)


@dataclass(frozen=True)
class SubagentResult:
    """Summary of a subagent's work observed during a run."""

    member: str = ""
    task: str = ""
    state: str = ""
    summary: str = ""
    usage: Usage | None = None
    unread: tuple[str, ...] = ()


@dataclass(frozen=True)
class ServiceReport:
    """A runtime service ensured or observed for a run."""

    name: str
    state: str = ""
    endpoint: str = ""


@dataclass
class Result:
    """What a run produced. Audit methods return copies."""

    turns: int = 0
    run_id: str = ""
    model: str = ""
    provider: str = ""
    text: str = ""
    summary: str = ""
    usage: Usage | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    thread_key: str = ""
    duration: float = 0.0
    _raw: RawStreams = field(default_factory=RawStreams, repr=False)
    _raw_chunks: tuple[list[bytes], list[bytes]] | None = field(default=None, repr=False)
    _transcript: list[TranscriptItem] = field(default_factory=list, repr=False)
    _messages: list[MessageOutcome] = field(default_factory=list, repr=False)
    _subagents: list[SubagentResult] = field(default_factory=list, repr=False)
    _services: list[ServiceReport] = field(default_factory=list, repr=False)
    _structured: Any = field(default=None, repr=False)
    _has_structured: bool = field(default=False, repr=False)

    def raw(self) -> RawStreams:
        """Complete stdout/stderr and the terminal payload (a copy that shares nothing with the Result)."""
        raw = self._streams()
        return RawStreams(raw.stdout, raw.stderr, copy.deepcopy(raw.terminal))

    def _streams(self) -> RawStreams:
        """``_raw``, with stdout and stderr joined from their chunks the first time they are needed."""
        if self._raw_chunks is not None:
            out, err = self._raw_chunks
            self._raw = RawStreams(
                self._raw.stdout + b"".join(out), self._raw.stderr + b"".join(err), self._raw.terminal
            )
            self._raw_chunks = None
        return self._raw

    def transcript(self) -> list[TranscriptItem]:
        """Normalized provider items plus delivered supplemental messages (a deep copy)."""
        return copy.deepcopy(self._transcript)

    def services(self) -> list[ServiceReport]:
        """Runtime services ensured or observed for the run (a deep copy)."""
        return copy.deepcopy(self._services)

    def messages(self) -> list[MessageOutcome]:
        """Final outcomes of supplemental messages, in admission order (a deep copy)."""
        return copy.deepcopy(self._messages)

    def undelivered(self) -> list[MessageOutcome]:
        """Messages that failed, with their original text (a deep copy)."""
        return copy.deepcopy([m for m in self._messages if m.state is MessageState.FAILED])

    def subagents(self) -> list[SubagentResult]:
        """Summaries of the subagents' work (a deep copy)."""
        return copy.deepcopy(self._subagents)

    @property
    def structured(self) -> Any:
        """The validated structured output (a JSON value), or None."""
        return copy.deepcopy(self._structured)

    def decode(self, tp: type[T] | Any) -> T:
        """Decode the structured output (or, without a schema, ``text`` as JSON) into ``tp``.

        ``tp`` is a pydantic model or any type pydantic validates (``list[Model]``, ``dict``, ``list``).
        """
        from ._schema import decode_value, parse_json_text

        value: Any = self._structured if self._has_structured else parse_json_text(self.text)
        return decode_value(value, tp)  # type: ignore[no-any-return]

    def detached(self) -> Result:
        """A deep copy that shares nothing with this result."""
        return copy.deepcopy(self)

    def with_subagents(self, subagents: list[SubagentResult]) -> Result:
        """A detached copy with the subagent summaries replaced."""
        r = self.detached()
        r._subagents = list(subagents)
        return r

    # -- notebook conveniences ---------------------------------------------------------------------------

    def to_pandas(self) -> pandas.DataFrame:
        """The structured output as a DataFrame (a list of records, or one record)."""
        from ._frames import structured_frame

        return structured_frame(self)

    def transcript_frame(self) -> pandas.DataFrame:
        """The transcript as a DataFrame, one row per item."""
        from ._frames import transcript_frame

        return transcript_frame(self)

    def _repr_markdown_(self) -> str:
        from ._frames import result_markdown

        return result_markdown(self)


def compose_results(run_id: str, *parts: Result | None) -> Result:
    """Aggregate several results as one run: last text/model/structured output, summed usage and turns."""
    out = Result(run_id=run_id)
    for p in parts:
        if p is None:
            continue
        base = out.turns  # message turns continue the composite turn sequence
        out.turns += p.turns
        out.usage = Usage.add(out.usage, p.usage)
        if p.text:
            out.text = p.text
        if p.summary:
            out.summary = p.summary
        if p.model:
            out.model = p.model
        if p.provider:
            out.provider = p.provider
        out.metadata.update(p.metadata)
        out.thread_key = p.thread_key or out.thread_key
        out.duration += p.duration
        mine, theirs = out._streams(), p._streams()
        out._raw = RawStreams(
            mine.stdout + theirs.stdout,
            mine.stderr + theirs.stderr,
            theirs.terminal or mine.terminal,
        )
        out._transcript.extend(p._transcript)
        out._messages.extend(replace(m, turn=m.turn + base if m.turn else 0) for m in p._messages)
        out._subagents.extend(p._subagents)
        out._services.extend(p._services)
        if p._has_structured:
            out._structured = copy.deepcopy(p._structured)
            out._has_structured = True
    return out.detached()
