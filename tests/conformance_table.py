"""The clause x driver conformance table of docs/conformance.md: run the public conformance suite over every driver
and write the table, or check one driver's column against a fresh run.

    PYTHONPATH=. .venv/bin/python tests/conformance_table.py            # run every driver, rewrite the table
    PYTHONPATH=. .venv/bin/python tests/conformance_table.py --check    # run every driver, fail when it differs
    PYTHONPATH=. .venv/bin/python tests/conformance_table.py cursor     # run some drivers, rewrite their columns

Claude Code, Codex and CodeBuddy run on their real binaries against the fake model servers, Cursor Agent on the
replay stand-in, the reference and echo example drivers in process. Each driver's own conformance test calls
``check_column`` on its fresh report, so the committed table is checked on every test run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from adaptor_nb.testing import ConformanceReport, run_driver_conformance
from adaptor_nb.testing.conformance import parse_table, render_table, replace_table, verdicts

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "conformance.md"
COLUMNS = ("claude", "codex", "codebuddy", "cursor", "reference", "echo")


def committed() -> dict[str, dict[str, str]]:
    """Column -> clause -> verdict of the committed table."""
    return parse_table(DOC.read_text(encoding="utf-8")) if DOC.exists() else {}


def check_column(report: ConformanceReport, column: str) -> None:
    """Fail unless the committed table's ``column`` has exactly the verdicts of ``report`` (a fresh run)."""
    table = committed().get(column)
    fresh = verdicts(report)
    if table != fresh:
        keys = sorted(set(fresh) | set(table or {}))
        diff = [f"{k}: table {(table or {}).get(k, 'missing')!r}, fresh run {fresh.get(k, 'missing')!r}" for k in keys]
        diff = [d for d, k in zip(diff, keys, strict=True) if (table or {}).get(k) != fresh.get(k)]
        raise AssertionError(
            f"docs/conformance.md is stale for {column!r} ({'; '.join(diff) or 'no column'}): rewrite it with "
            f"PYTHONPATH=. .venv/bin/python tests/conformance_table.py {column}"
        )


@contextlib.contextmanager
def _tripwire(name: str) -> Iterator[Any]:
    from _support import network_tripwire

    with network_tripwire(name) as wire:
        yield wire


def _cli(name: str) -> str:
    from adaptor_nb.testing import find_cli

    found = find_cli(name)
    if found is None:
        raise SystemExit(f"{name} is not installed: run `bash scripts/setup.sh` first")
    return found


async def run_column(column: str) -> ConformanceReport:
    """A fresh conformance report for the driver of ``column``, as its own test runs it."""
    if column == "reference":
        from adaptor_nb.drivers import reference

        return await run_driver_conformance(reference.Driver, raise_on_failure=False)
    if column == "echo":
        from drivers.test_echo_example import make_factory as echo_factory

        return await run_driver_conformance(echo_factory(), timeout=30, raise_on_failure=False)
    if column == "cursor":
        from cursor.test_cursor_conformance import make_factory as cursor_factory

        return await run_driver_conformance(cursor_factory(), timeout=60, raise_on_failure=False)
    if column == "claude":
        from claude.test_conformance import make_factory as claude_factory

        options = {"model": "claude-fake-1"}
        factory = claude_factory(_cli("claude"))
        return await run_driver_conformance(factory, agent_options=options, raise_on_failure=False)
    if column == "codex":
        from codex.test_codex_conformance import make_factory as codex_factory
        from codex.test_codex_conformance import prompt_for

        with _tripwire("the Codex CLI") as wire:
            factory = codex_factory(_cli("codex"), wire)
            return await run_driver_conformance(factory, prompt_for=prompt_for, raise_on_failure=False)
    if column == "codebuddy":
        from codebuddy.test_codebuddy_conformance import make_factory as codebuddy_factory

        with _tripwire("CodeBuddy Code") as wire:
            return await run_driver_conformance(codebuddy_factory(_cli("codebuddy"), wire), raise_on_failure=False)
    raise ValueError(f"unknown column {column!r}; known: {', '.join(COLUMNS)}")


async def run_columns(columns: list[str], report: Callable[[str, ConformanceReport], None]) -> dict[str, Any]:
    reports: dict[str, ConformanceReport] = {}
    for column in columns:
        reports[column] = await run_column(column)
        report(column, reports[column])
    return reports


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("columns", nargs="*", help=f"drivers to run (default: all of {', '.join(COLUMNS)})")
    parser.add_argument("--check", action="store_true", help="fail when the committed table differs; write nothing")
    args = parser.parse_args(argv)
    columns = list(args.columns or COLUMNS)

    def progress(column: str, report: ConformanceReport) -> None:
        print(report, flush=True)

    reports = asyncio.run(run_columns(columns, progress))
    if args.check:
        failures = []
        for column in columns:
            try:
                check_column(reports[column], column)
            except AssertionError as exc:
                failures.append(str(exc))
        print("\n".join(failures) or "docs/conformance.md matches a fresh run")
        return 1 if failures else 0
    if len(columns) < len(COLUMNS):
        # Keep the other columns as committed: render them from a report rebuilt from the table's own verdicts.
        reports = {c: reports.get(c) or _from_table(c) for c in COLUMNS}
    DOC.write_text(replace_table(DOC.read_text(encoding="utf-8"), render_table(reports)), encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0 if all(r.ok for r in reports.values()) else 1


def _from_table(column: str) -> ConformanceReport:
    """A report carrying the committed cells of ``column`` (reasons included), to re-render it unchanged."""
    from adaptor_nb.testing import CLAUSES, CheckResult

    text = DOC.read_text(encoding="utf-8")
    cells = _cells(text, column)
    results = []
    for name, clause in CLAUSES.items():
        cell = cells.get(clause.id, "")
        if not cell or cell == "not run":
            continue
        status = "pass" if cell.startswith("pass") else "fail" if "fail" in cell[:8] else "skip"
        reason = cell.split("(", 1)[1].rsplit(")", 1)[0] if "(" in cell else ""
        results.append(CheckResult(name, status, reason, clause=clause.id))  # type: ignore[arg-type]
    return ConformanceReport(driver=column, descriptor=None, results=tuple(results))


def _cells(text: str, column: str) -> dict[str, str]:
    """The committed cells of ``column`` by clause (empty when the table or the column is missing)."""
    from adaptor_nb.testing.conformance._table import BEGIN, END

    if BEGIN not in text or END not in text:
        return {}
    body = text.split(BEGIN, 1)[1].split(END, 1)[0]
    rows = [line for line in body.splitlines() if line.startswith("|")]
    header = [c.strip() for c in rows[0].strip("|").split("|")] if rows else []
    if column not in header:
        return {}
    at = header.index(column)
    return {cells[0]: cells[at] for cells in ([c.strip() for c in r.strip("|").split("|")] for r in rows[2:])}


if __name__ == "__main__":
    sys.exit(main())
