"""The public driver conformance suite."""

from ._checks import (
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
