"""What a session recording keeps of a run's final result: little by default, more only when asked for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._result import Result
from ._codec import encode


@dataclass(frozen=True)
class ExposurePolicy:
    """Which parts of ``Done`` / ``TurnEnd`` results a recording keeps.

    By default only the run id, turns, text, summary and the error's identity (class, reason, message) are kept.
    Each flag opts one more part in: ``include_metadata`` (model, provider, thread key, metadata),
    ``include_usage``, and, as private audit data that replays on ``EventRecord.diagnostics`` and never on the
    replayed Result, ``include_raw_streams``, ``include_provider_result`` (the last terminal payload),
    ``include_transcript`` and ``include_services``. Other event types are kept as they are: a host that must
    redact them does so before recording.
    """

    include_metadata: bool = False
    include_usage: bool = False
    include_raw_streams: bool = False
    include_provider_result: bool = False
    include_transcript: bool = False
    include_services: bool = False

    def result(self, result: Result | None) -> dict[str, Any] | None:
        """The kept public fields of ``result``."""
        if result is None:
            return None
        kept: dict[str, Any] = {
            "run_id": result.run_id,
            "turns": result.turns,
            "text": result.text,
            "summary": result.summary,
        }
        if self.include_metadata:
            kept.update(
                model=result.model, provider=result.provider, thread_key=result.thread_key, metadata=result.metadata
            )
        if self.include_usage and result.usage is not None:
            kept["usage"] = encode(result.usage)
        return kept

    def diagnostics(self, result: Result | None) -> dict[str, Any]:
        """The private audit data the policy opts in (empty by default)."""
        if result is None:
            return {}
        out: dict[str, Any] = {}
        raw = result.raw()
        if self.include_raw_streams:
            out["raw_streams"] = {"stdout": encode(raw.stdout), "stderr": encode(raw.stderr)}
        if self.include_provider_result and raw.terminal is not None:
            out["provider_result"] = encode(raw.terminal)
        if self.include_transcript:
            out["transcript"] = encode(result.transcript())
        if self.include_services:
            out["services"] = encode(result.services())
        return out
