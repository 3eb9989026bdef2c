"""The clause x driver table: render conformance reports as markdown, and read a rendered table back.

A cell is ``pass``, ``n/a (reason)`` for a check that does not apply to what the driver declares, or
``**fail** (reason)``. Reading a table back gives each cell's verdict (``pass``, ``n/a`` or ``fail``), so a committed
table can be compared with a fresh run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ._clauses import CLAUSES, FAMILIES
from ._report import CheckResult, ConformanceReport

BEGIN = "<!-- conformance table: generated, do not edit by hand -->"
END = "<!-- end of the conformance table -->"
VERDICTS = ("pass", "n/a", "fail")


def verdict(result: CheckResult) -> str:
    """``pass``, ``n/a`` (skipped: the check does not apply) or ``fail``."""
    return {"pass": "pass", "skip": "n/a", "fail": "fail"}[result.status]


def verdicts(report: ConformanceReport) -> dict[str, str]:
    """Clause id -> verdict, for every check of ``report``."""
    return {r.clause: verdict(r) for r in report.results if r.clause}


def _cell(result: CheckResult | None) -> str:
    if result is None:
        return "not run"
    reason = " ".join(result.reason.split()).replace("|", "/")
    if result.status == "pass":
        return "pass"
    if result.status == "skip":
        return f"n/a ({reason})" if reason else "n/a"
    return f"**fail** ({reason})" if reason else "**fail**"


def render_table(reports: Mapping[str, ConformanceReport]) -> str:
    """The markdown table (between its markers) of ``reports``, one column per key, one row per clause."""
    columns = list(reports)
    by_clause = {column: reports[column].by_clause() for column in columns}
    rows = sorted(CLAUSES.items(), key=lambda kv: (FAMILIES.index(kv[1].family), kv[1].number))
    lines = [
        BEGIN,
        "",
        "| clause | check | what it verifies | " + " | ".join(columns) + " |",
        "|---|---|---|" + "---|" * len(columns),
    ]
    for name, clause in rows:
        cells = [_cell(by_clause[column].get(clause.id)) for column in columns]
        lines.append(f"| {clause.id} | `{name}` | {clause.title} | " + " | ".join(cells) + " |")
    lines += ["", END]
    return "\n".join(lines)


_VERDICT = re.compile(r"^\**(pass|n/a|fail)\b")


def parse_table(text: str) -> dict[str, dict[str, str]]:
    """Column -> clause id -> verdict, read from the table between the markers in ``text`` (empty without one)."""
    if BEGIN not in text or END not in text:
        return {}
    body = text.split(BEGIN, 1)[1].split(END, 1)[0]
    rows = [line for line in body.splitlines() if line.startswith("|")]
    if len(rows) < 2:
        return {}
    header = [c.strip() for c in rows[0].strip("|").split("|")]
    columns = header[3:]
    table: dict[str, dict[str, str]] = {column: {} for column in columns}
    for line in rows[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        clause = cells[0]
        for column, cell in zip(columns, cells[3:], strict=False):
            found = _VERDICT.match(cell)
            table[column][clause] = found.group(1) if found else cell
    return table


def replace_table(document: str, table: str) -> str:
    """``document`` with the table between its markers replaced by ``table`` (appended when it has none)."""
    if BEGIN in document and END in document:
        head = document.split(BEGIN, 1)[0]
        tail = document.split(END, 1)[1]
        return head + table + tail
    return document.rstrip() + "\n\n" + table + "\n"
