"""Scripted scenarios for the reference driver: turns made of steps (text, thinking, tools, approvals, ...)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from ...driver import (
    ApprovalKind,
    Event,
    FailureReason,
)


@dataclass(frozen=True)
class Text:
    """Assistant text, streamed in chunks of ``chunk`` characters."""

    text: str
    chunk: int = 16


@dataclass(frozen=True)
class ThinkingStep:
    """Reasoning text."""

    text: str


@dataclass(frozen=True)
class ToolUse:
    """A tool call with streamed arguments and a result; ``approval`` asks for permission first."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False
    approval: ApprovalKind | None = None
    id: str = ""


@dataclass(frozen=True)
class HostCall:
    """A call of one of the Agent's host tools (``tools=[...]``): the driver calls the Agent's tool server and
    reports the answer it gets, as a CLI would."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str = ""


@dataclass(frozen=True)
class HostCalls:
    """Several host-tool calls made in one model step (they run concurrently)."""

    calls: tuple[HostCall, ...]

    def __init__(self, *calls: HostCall) -> None:
        object.__setattr__(self, "calls", tuple(calls))


@dataclass(frozen=True)
class Ask:
    """A question for the human with choices; the answer becomes the tool input ``answer``."""

    question: str
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlanReview:
    """A plan the human must approve before the agent goes on."""

    plan: str


@dataclass(frozen=True)
class Structured:
    """The structured answer of the turn (what a native provider would report)."""

    value: Any


@dataclass(frozen=True)
class Fail:
    """End the run with a provider failure (after whatever came before)."""

    message: str
    reason: FailureReason = FailureReason.AGENT_ERROR
    retryable: bool = False
    retry_after: float | None = None
    stderr: str = ""


@dataclass(frozen=True)
class Crash:
    """Raise an unexpected exception inside the driver."""

    message: str = "the scripted provider crashed"


@dataclass(frozen=True)
class Stderr:
    """A chunk of provider stderr."""

    text: str


@dataclass(frozen=True)
class Delay:
    """Pause for ``seconds`` (for demos; tests should use Gate)."""

    seconds: float


@dataclass(frozen=True)
class Subagent:
    """A subagent that starts, reports a delta and finishes."""

    task: str
    summary: str = ""


@dataclass(frozen=True)
class Emit:
    """Events the provider publishes as given (a plan update, a capability start or end, ...)."""

    events: tuple[Event, ...]

    def __init__(self, *events: Event) -> None:
        object.__setattr__(self, "events", events)


class Gate:
    """A step that waits until the test calls ``open()``; ``reached`` is set when the run arrives at it."""

    def __init__(self) -> None:
        self._open = asyncio.Event()
        self.reached = asyncio.Event()

    def open(self) -> None:
        self._open.set()

    async def pass_through(self) -> None:
        self.reached.set()
        await self._open.wait()


@dataclass(frozen=True)
class WaitForMessage:
    """Wait for supplemental input, unless some arrived since the last such step (deterministic tests)."""


Step = (
    Text
    | ThinkingStep
    | ToolUse
    | HostCall
    | HostCalls
    | Ask
    | PlanReview
    | Structured
    | Fail
    | Crash
    | Stderr
    | Delay
    | Subagent
    | Emit
    | Gate
    | WaitForMessage
)


@dataclass(frozen=True)
class Turn:
    """One provider turn; ``auto_continue`` makes the provider start another turn by itself."""

    steps: tuple[Step, ...]
    auto_continue: bool = False
    usage: tuple[int, int] | None = None

    def __init__(self, *steps: Step | str, auto_continue: bool = False, usage: tuple[int, int] | None = None) -> None:
        object.__setattr__(self, "steps", tuple(Text(s) if isinstance(s, str) else s for s in steps))
        object.__setattr__(self, "auto_continue", auto_continue)
        object.__setattr__(self, "usage", usage)


@dataclass(frozen=True)
class Scenario:
    """Turns played in order: the first answers the prompt, later ones answer supplemental input."""

    turns: tuple[Turn, ...]
    model: str = "reference-scripted"

    def __init__(self, *turns: Turn | str, model: str = "reference-scripted") -> None:
        object.__setattr__(self, "turns", tuple(Turn(t) if isinstance(t, str) else t for t in turns))
        object.__setattr__(self, "model", model)


def scenario(*turns: Turn | str, model: str = "reference-scripted") -> Scenario:
    """Shorthand for ``Scenario(...)``."""
    return Scenario(*turns, model=model)
