"""Compatibility name for :mod:`adaptor_nb.testing.conformance` (tests/codex imports ConformanceCase from here)."""

from .conformance import (
    CHECKS,
    CheckResult,
    ConformanceCase,
    ConformanceReport,
    Hold,
    ModelRun,
    default_prompt,
    run_driver_conformance,
)

__all__ = [
    "CHECKS",
    "CheckResult",
    "ConformanceCase",
    "ConformanceReport",
    "Hold",
    "ModelRun",
    "default_prompt",
    "run_driver_conformance",
]
