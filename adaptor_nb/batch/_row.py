"""One row of a batch: what to run (RowJob) and what came of it (RowOutcome)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

OK = "ok"
FAILED = "failed"
SKIPPED = "skipped"
CACHED = "cached"


@dataclass(frozen=True)
class RowJob:
    """A rendered row: its index label, prompt, optional thread key and the idempotency key that names it."""

    label: Any
    prompt: str
    thread: str | None = None
    key: str = ""
    workspace: str | None = None
    workspace_spec: Any = None
    """A workspace spec: the row runs in its own provisioned workspace (the row key goes in its metadata)."""


@dataclass
class RowOutcome:
    """The per-row accounting that becomes one line of the output frame."""

    status: str
    values: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    turns: int = 0
    attempts: int = 0
    duration_s: float = 0.0
    run_id: str = ""

    @staticmethod
    def skipped(reason: str) -> RowOutcome:
        return RowOutcome(SKIPPED, error=reason)
