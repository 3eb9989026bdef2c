"""Verdicts: one CheckResult per check, gathered into a ConformanceReport."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from adaptor_nb.driver import Descriptor

Status = Literal["pass", "fail", "skip"]


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one check."""

    name: str
    status: Status
    reason: str = ""
    duration: float = 0.0
    clause: str = ""
    """The clause the check verifies, ``family.number`` (``"event.1"``)."""


@dataclass(frozen=True)
class ConformanceReport:
    """Per-check verdicts for one driver."""

    driver: str
    descriptor: Descriptor | None
    results: tuple[CheckResult, ...]

    @property
    def passed(self) -> list[str]:
        return [r.name for r in self.results if r.status == "pass"]

    @property
    def failed(self) -> list[CheckResult]:
        return [r for r in self.results if r.status == "fail"]

    @property
    def skipped(self) -> list[CheckResult]:
        return [r for r in self.results if r.status == "skip"]

    @property
    def ok(self) -> bool:
        return not self.failed

    def status(self, name: str) -> Status:
        """The status of check ``name`` (a check name or its clause id, ``"event.1"``)."""
        for r in self.results:
            if name in (r.name, r.clause):
                return r.status
        raise KeyError(f"no check named {name!r} in this report")

    def by_clause(self) -> dict[str, CheckResult]:
        """Every result by its clause id."""
        return {r.clause: r for r in self.results if r.clause}

    def __str__(self) -> str:
        lines = [
            f"driver conformance for {self.driver!r}: {len(self.passed)} passed, {len(self.failed)} failed, "
            f"{len(self.skipped)} skipped"
        ]
        for r in self.results:
            tail = f": {r.reason}" if r.reason else ""
            clause = f"{r.clause} " if r.clause else ""
            lines.append(f"  {r.status.upper():4} {clause}{r.name} ({r.duration:.2f} s){tail}")
        return "\n".join(lines)

    def raise_for_failures(self) -> None:
        """Raise AssertionError listing every failed check."""
        if self.failed:
            listing = "\n".join(f"- {r.name}: {r.reason}" + (f" [{r.clause}]" if r.clause else "") for r in self.failed)
            raise AssertionError(f"driver {self.driver!r} failed {len(self.failed)} conformance check(s):\n{listing}")
