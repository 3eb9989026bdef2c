"""The case vocabulary: what the model does in each run of a check, the hold, the default prompt."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from adaptor_nb import ApprovalKind

FOLLOW_UP = "Conformance follow-up answer."
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["title", "count"],
    "additionalProperties": False,
}
STRUCTURED_VALUE: dict[str, Any] = {"title": "conformance", "count": 3}
QUESTION_CHOICES = ("red", "blue")


class Hold(threading.Event):
    """A pause inside a scripted model turn: the model waits here until the suite calls ``release()``.

    It is a ``threading.Event``, so a fake model server thread can wait on it directly; ``wait()`` (or an explicit
    ``arrived()``) tells the suite the turn has reached the pause.
    """

    def __init__(self) -> None:
        super().__init__()
        self._arrival = threading.Event()
        self._callbacks: list[Callable[[], None]] = []
        self._interrupt_callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._notify: Callable[[], None] | None = None

    def arrived(self) -> None:
        """Report that the model reached the pause (thread-safe)."""
        with self._lock:
            self._arrival.set()
            notify = self._notify
        if notify is not None:
            notify()

    @property
    def has_arrived(self) -> bool:
        return self._arrival.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Report the arrival, then block until released (or ``timeout``)."""
        self.arrived()
        return super().wait(timeout)

    def on_interrupt(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the suite has asked the provider to interrupt the held turn.

        The hold itself stays closed until the interrupting message settles, so a real provider must abort the held
        request on its own; a scripted model that only notices interrupts between its steps (like the reference
        driver's) can use this to move on to its next step.
        """
        with self._lock:
            self._interrupt_callbacks.append(callback)

    def _interrupted(self) -> None:
        with self._lock:
            callbacks, self._interrupt_callbacks = self._interrupt_callbacks, []
        for cb in callbacks:
            cb()

    def on_release(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the hold is released (at once if it already is)."""
        with self._lock:
            if not self.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def release(self) -> None:
        """Let the model go on (idempotent)."""
        with self._lock:
            if self.is_set():
                return
            self.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb()

    def _bind(self, loop: asyncio.AbstractEventLoop, event: asyncio.Event) -> None:
        def notify() -> None:
            if not loop.is_closed():
                loop.call_soon_threadsafe(event.set)

        with self._lock:
            self._notify = notify
            arrived = self._arrival.is_set()
        if arrived:
            notify()


@dataclass(frozen=True)
class ModelRun:
    """What the model does during one run of a check, in provider-neutral terms."""

    reply: str
    approval: ApprovalKind | None = None
    choices: tuple[str, ...] = ()
    structured: Any = None
    hold: bool = False
    fail: bool = False
    follow_up: str = FOLLOW_UP
    host_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    """Host-tool calls (tool name, arguments) the model makes in one step before it replies; a provider that can make
    only one call per model step makes them one after the other."""
    host_expect: tuple[str, ...] = ()
    """Texts the tool results the model receives must contain; a scripted model that does not find them all in its
    next request answers something other than ``reply`` (so the check sees the results did not arrive)."""


@dataclass
class ConformanceCase:
    """One check's script: the runs the model must play, a fresh workspace, and the hold the suite releases."""

    check: str
    runs: tuple[ModelRun, ...] = ()
    workspace: str = ""
    hold: Hold = field(default_factory=Hold)
    schema: dict[str, Any] | None = None


def default_prompt(case: ConformanceCase, index: int) -> str:
    """The prompt of run ``index``: plain words asking for the scripted reply."""
    run = case.runs[index]
    return f"adaptor_nb conformance check {case.check!r}, run {index + 1}. Reply with exactly: {run.reply}"
