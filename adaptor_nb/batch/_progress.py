"""Batch progress counters, and a plain-terminal progress line (tqdm-style, on stderr)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from ._row import CACHED, FAILED, OK, SKIPPED, RowOutcome


@dataclass
class Progress:
    """Live counts of a batch; listeners are called after every change."""

    total: int
    done: int = 0
    cached: int = 0
    failed: int = 0
    skipped: int = 0
    running: int = 0
    cost_usd: float = 0.0
    started: float = field(default_factory=time.monotonic)
    failures: list[tuple[object, str]] = field(default_factory=list)
    live: dict[object, float] = field(default_factory=dict)
    outcomes: dict[object, RowOutcome] = field(default_factory=dict)  # label -> how the row ended (the view's table)
    listeners: list[Callable[[Progress], None]] = field(default_factory=list)

    @property
    def queued(self) -> int:
        return self.total - self.finished - self.running

    @property
    def finished(self) -> int:
        return self.done + self.cached + self.failed + self.skipped

    @property
    def throughput(self) -> float:
        """Rows finished per second since the start."""
        elapsed = time.monotonic() - self.started
        return self.finished / elapsed if elapsed > 0 else 0.0

    def slowest(self) -> tuple[object, float] | None:
        """The live row that has run longest, with its seconds so far (None when no row runs)."""
        if not self.live:
            return None
        label, since = min(self.live.items(), key=lambda kv: kv[1])
        return label, time.monotonic() - since

    def admit(self, label: object = None) -> None:
        self.running += 1
        if label is not None:
            self.live[label] = time.monotonic()
        self._changed()

    def reopen(self, labels: list[object]) -> None:
        """Put failed rows back in the queue (for a retry): they leave ``failed`` and ``failures``."""
        again = set(labels)
        self.failures = [(label, error) for label, error in self.failures if label not in again]
        for label in again:
            self.outcomes.pop(label, None)
        self.failed -= len(labels)
        self._changed()

    def finish(self, label: object, out: RowOutcome, *, was_running: bool) -> None:
        if was_running:
            self.running -= 1
            self.live.pop(label, None)
        if out.status == OK:
            self.done += 1
        elif out.status == CACHED:
            self.cached += 1
        elif out.status == FAILED:
            self.failed += 1
            self.failures.append((label, out.error))
        elif out.status == SKIPPED:
            self.skipped += 1
        self.outcomes[label] = out
        if out.status != CACHED:
            self.cost_usd += out.cost_usd
        self._changed()

    def _changed(self) -> None:
        for listener in self.listeners:
            listener(self)

    def summary(self) -> str:
        return (
            f"{self.finished}/{self.total} rows: {self.done} ok, {self.cached} cached, {self.failed} failed, "
            f"{self.skipped} skipped, {self.running} running, {self.queued} queued; ${self.cost_usd:.4f}"
        )

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(self.summary())}</pre>"


class TerminalLine:
    """Redraws one status line at most every ``interval`` seconds, and once more at the end."""

    def __init__(self, stream: TextIO | None = None, interval: float = 0.2) -> None:
        self.stream = stream or sys.stderr
        self.interval = interval
        self._last = 0.0

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        if p.finished < p.total and now - self._last < self.interval:
            return
        self._last = now
        width = 24
        filled = int(width * p.finished / p.total) if p.total else width
        bar = "#" * filled + "-" * (width - filled)
        end = "\n" if p.finished == p.total else ""
        self.stream.write(f"\r[{bar}] {p.summary()} {p.throughput:.1f} rows/s{end}")
        self.stream.flush()
