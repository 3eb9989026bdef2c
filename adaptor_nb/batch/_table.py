"""The batch view's result table: one row per input row, filled in as rows finish, and its static form.

Each row has its label, status (queued, running, ok, cached, failed, skipped), the schema's fields as they arrive,
cost, tokens and time, and the error of a failed row. Totals and an estimate of the time and cost to finish come
from the rows finished so far. The static form (what a saved or exported notebook keeps) leaves out times, which
change from run to run.
"""

from __future__ import annotations

import html
import time
from typing import Any

from ._progress import Progress
from ._row import RowOutcome

QUEUED, RUNNING = "queued", "running"


def _cell(value: Any) -> Any:
    """A field value the front end can show (JSON scalars stay; anything else becomes its text)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def table_rows(labels: list[Any], progress: Progress) -> list[dict[str, Any]]:
    """One entry per input row, in input order: label, status, fields and accounting."""
    out: list[dict[str, Any]] = []
    outcomes = progress.outcomes
    for label in labels:
        done: RowOutcome | None = outcomes.get(label)
        if done is None:
            status = RUNNING if label in progress.live else QUEUED
            out.append({"label": str(label), "status": status, "fields": {}})
            continue
        out.append(
            {
                "label": str(label),
                "status": done.status,
                "fields": {k: _cell(v) for k, v in done.values.items()},
                "error": done.error,
                "cost_usd": round(done.cost_usd, 6),
                "input_tokens": done.input_tokens,
                "output_tokens": done.output_tokens,
                "seconds": round(done.duration_s, 2),
            }
        )
    return out


def estimate(progress: Progress) -> dict[str, Any]:
    """Totals so far and what finishing would take at the pace so far (None before the first finished row)."""
    finished = [o for o in progress.outcomes.values() if o.status in ("ok", "failed")]
    remaining = progress.total - progress.finished
    tokens = sum(o.input_tokens + o.output_tokens for o in progress.outcomes.values())
    totals: dict[str, Any] = {"tokens": tokens, "remaining": remaining, "eta_s": None, "eta_cost_usd": None}
    if finished and remaining > 0:
        elapsed = time.monotonic() - progress.started
        totals["eta_s"] = round(elapsed / progress.finished * remaining, 1) if progress.finished else None
        totals["eta_cost_usd"] = round(sum(o.cost_usd for o in finished) / len(finished) * remaining, 6)
    return totals


def table_html(labels: list[Any], progress: Progress, limit: int = 200) -> str:
    """The final table as escaped HTML (no times: the same on every run); at most ``limit`` rows."""
    e = html.escape
    rows = table_rows(labels, progress)
    fields: list[str] = []
    for row in rows:
        fields += [k for k in row["fields"] if k not in fields]
    head = "".join(f"<th>{e(h)}</th>" for h in ["row", "status", *fields, "cost", "tokens in / out"])
    parts = [f'<table class="anb-batch-rows" style="border-collapse:collapse;margin-top:4px"><tr>{head}</tr>']
    for row in rows[:limit]:
        failed = row["status"] == "failed"
        title = f' title="{e(row.get("error") or "")}"' if failed else ""
        cells = [f"<td><code>{e(row['label'])}</code></td>", f"<td{title}>{e(row['status'])}</td>"]
        cells += [f"<td>{e('' if row['fields'].get(f) is None else str(row['fields'][f]))}</td>" for f in fields]
        if "cost_usd" in row:
            cells.append(f"<td>${row['cost_usd']:.4f}</td><td>{row['input_tokens']} / {row['output_tokens']}</td>")
        else:
            cells.append("<td></td><td></td>")
        style = ' style="color:var(--jp-error-color1,#c00)"' if failed else ""
        parts.append(f"<tr{style}>{''.join(cells)}</tr>")
    if len(rows) > limit:
        parts.append(f"<tr><td colspan='{len(fields) + 4}'>… {len(rows) - limit} more rows in the frame</td></tr>")
    parts.append("</table>")
    return "".join(parts)
