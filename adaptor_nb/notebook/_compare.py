"""``%%agent --driver A,B,...`` (or ``--agent A,B``): the same prompt on each driver at once, shown side by side,
with a comparison table at the end; ``--out`` gets a mapping by driver.

Each driver runs on the notebook's Agent for it (with ``--thread KEY``: its own thread ``KEY-<driver>``). Every
driver's options and credentials are checked before any run starts. The views stand in columns while the runs go
(a front end shows them live); at the end the cell shows the comparison table: answer, turns, tool calls, time,
tokens, cost and status, and with ``--schema`` the structured output field by field.
"""

from __future__ import annotations

import asyncio
import dataclasses
import html
from typing import Any

from .._views._frontend import front_end
from ._args import CellOptions, compared
from ._session import NotebookSession, Plan
from ._waiting import Interrupted, _short, _wait, one_sentence, partial_result, show

ANSWER_CHARS = 160


def _one(opts: CellOptions, name: str, by_agent: bool) -> CellOptions:
    """The options of one column: one driver (or Agent), its own thread."""
    thread = f"{opts.thread}-{name.replace(':', '-')}" if opts.thread else None
    if by_agent:
        return dataclasses.replace(opts, agent=name, driver=None, thread=thread)
    return dataclasses.replace(opts, driver=name, agent=None, thread=thread)


def _fields(value: Any) -> dict[str, Any]:
    """A structured value's fields (a pydantic model, a dict), for the field-by-field columns."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump()
    return dict(value) if isinstance(value, dict) else {"value": value} if value is not None else {}


def comparison_rows(names: list[str], results: list[Any], errors: list[Any], schema: Any) -> list[dict[str, Any]]:
    """One row per driver: answer, turns, tool calls, time, tokens, cost, status and the structured fields."""
    rows: list[dict[str, Any]] = []
    for name, result, err in zip(names, results, errors, strict=True):
        usage = getattr(result, "usage", None)
        transcript = result.transcript() if result is not None else []
        row: dict[str, Any] = {
            "driver": name,
            "status": "ok" if err is None else type(err).__name__,
            "answer": " ".join(str(getattr(result, "text", "") or "").split())[:ANSWER_CHARS],
            "turns": getattr(result, "turns", 0),
            "tool calls": sum(1 for item in transcript if item.kind == "tool_use"),
            "time s": round(float(getattr(result, "duration", 0.0) or 0.0), 2),
            "tokens in": usage.input_tokens if usage else 0,
            "tokens out": usage.output_tokens if usage else 0,
            "cost $": round(usage.cost_usd, 4) if usage else 0.0,
        }
        if schema is not None and result is not None and err is None:
            try:
                row.update({f"{k}": v for k, v in _fields(result.decode(schema)).items()})
            except Exception as exc:
                row["status"] = f"invalid output ({type(exc).__name__})"
        rows.append(row)
    return rows


class Comparison:
    """The comparison table as escaped HTML and plain text (agent output is data)."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def columns(self) -> list[str]:
        cols: list[str] = []
        for row in self.rows:
            cols += [k for k in row if k not in cols]
        return cols

    def _repr_html_(self) -> str:
        e = html.escape
        cols = self.columns()
        head = "".join(f"<th>{e(c)}</th>" for c in cols)
        body = "".join(
            "<tr>" + "".join(f"<td>{e(str(row.get(c, '')))}</td>" for c in cols) + "</tr>" for row in self.rows
        )
        return f'<table class="anb-compare" style="border-collapse:collapse"><tr>{head}</tr>{body}</table>'

    def __repr__(self) -> str:
        cols = self.columns()
        lines = [" | ".join(cols)]
        lines += [" | ".join(str(row.get(c, "")) for c in cols) for row in self.rows]
        return "\n".join(lines)


def _columns(views: list[Any]) -> Any:
    """The views side by side (an ipywidgets HBox; each view takes an equal share of the width)."""
    import ipywidgets

    for view in views:
        view.layout = ipywidgets.Layout(flex="1 1 0", min_width="280px")
    return ipywidgets.HBox(views, layout=ipywidgets.Layout(align_items="flex-start", gap="8px"))


def _static_columns(views: list[Any]) -> Any:
    """The finished runs' static forms in columns (what headless runs and exports show)."""
    from .._views._static import StaticRun

    cells = "".join(f'<div style="flex:1 1 0;min-width:280px">{v.static_bundle()["text/html"]}</div>' for v in views)
    plain = "\n\n".join(v.static_bundle()["text/plain"] for v in views)
    return StaticRun({"text/html": f'<div style="display:flex;gap:8px">{cells}</div>', "text/plain": plain})


async def run_compare(
    session: NotebookSession, opts: CellOptions, prompt: str, schema: Any, namespace: dict[str, Any], shell: Any
) -> None:
    """Run one comparing cell; binds ``--out`` to ``{driver: Result or value}``."""
    from .._views._view import RunView

    names = list(compared(opts))
    by_agent = opts.driver is None
    plans: list[Plan] = [await session.plan(_one(opts, name, by_agent), namespace) for name in names]
    views: list[Any] = []
    streams: list[Any] = []
    for plan in plans:
        call = dict(plan.call)
        if schema is not None:
            call["schema"] = schema
        stream = plan.runner.send(prompt, **call)
        view = RunView(
            driver=plan.driver, model=plan.model, thread=plan.thread, note=plan.note, approval_note=plan.approval_note
        )
        view.attach(stream)
        streams.append(stream)
        views.append(view)
    live = front_end(shell)
    if live:
        show(_columns(views))
    run_ids = [session.started(s, v, p) for s, v, p in zip(streams, views, plans, strict=True)]
    outcomes = await asyncio.gather(*(_wait(v, s) for v, s in zip(views, streams, strict=True)), return_exceptions=True)
    dones: list[Any] = []
    for view, run_id, outcome in zip(views, run_ids, outcomes, strict=True):
        view.close_updates()
        done = outcome.done if isinstance(outcome, Interrupted) else outcome
        done = done if not isinstance(done, BaseException) else None
        dones.append(done)
        session.ended(run_id, "done" if done is not None and done.err is None else "failed", partial_result(done))
    if not live:
        show(_static_columns(views))
    results = [partial_result(d) for d in dones]
    errors = [getattr(d, "err", None) if d is not None else RuntimeError("no result") for d in dones]
    show(Comparison(comparison_rows(names, results, errors, schema)))
    out: dict[str, Any] = {}
    for name, result, err in zip(names, results, errors, strict=True):
        out[name] = result.decode(schema) if schema is not None and err is None and result is not None else result
    namespace[opts.out] = out
    if any(isinstance(o, Interrupted) for o in outcomes):
        raise _short(KeyboardInterrupt(f"the %%agent runs were interrupted; the partial Results are in {opts.out}"))
    failed = [(n, e) for n, e in zip(names, errors, strict=True) if e is not None]
    if failed and not (opts.no_raise or session.config.no_raise):
        name, err = failed[0]
        raise _short(err, f"{name} failed; every driver's Result is in {opts.out}[name]")
    for name, err in failed:
        print(f"{name}: {one_sentence(err)} (not raised: --no-raise; its partial Result is in {opts.out}[{name!r}])")
