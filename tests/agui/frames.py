"""Helpers: map a whole Stream through the bridge's mapper into one AG-UI run, and validate recorded streams."""

from __future__ import annotations

import json
from typing import Any

from ag_ui_validate.pytest_plugin import validate_agui

from adaptor_nb import Done, Stream
from adaptor_nb.bridges.agui import EventMapper, frame


async def one_run(stream: Stream, thread_id: str = "t", run_id: str = "r1") -> list[dict[str, Any]]:
    """The AG-UI events of ``stream`` as one run, as JSON objects (what goes on the wire)."""
    mapper = EventMapper(stream.run_id)
    out = [frame.started(thread_id, run_id), mapper.snapshot()]
    async for ev in stream.events():
        out += mapper.map(ev)
        if isinstance(ev, Done):
            out += mapper.close()
            out.append(frame.finished(thread_id, run_id, ev))
    return [json.loads(e.model_dump_json(by_alias=True)) for e in out]


def findings(events: list[dict[str, Any]]) -> list[str]:
    """The validator's errors and warnings for a recorded stream (empty when it is clean), and its notes on missing
    timestamps and unnamespaced CUSTOM names, which the bridge avoids too."""
    report = validate_agui(events)
    return [
        f"{d.severity} {d.rule} #{d.event_index} {d.event_type}: {d.message}"
        for d in report.diagnostics
        if d.severity in ("error", "warning")
    ]
