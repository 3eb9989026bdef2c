"""Plans and capability use within one run: plan revisions numbered, capability scopes paired, both transcribed."""

from __future__ import annotations

import dataclasses
from typing import Any

from .._events import CapabilityEnd, CapabilityStart, Event, PlanUpdate
from .._result import TranscriptItem


class ActivityLedger:
    """What the core adds to a driver's ``PlanUpdate`` and ``Capability*`` events.

    A plan update gets the run's next revision (1, 2, 3...); a capability start opens its scope and its end closes
    it; each becomes a transcript item. ``close_open`` ends what the driver left open, with ``ok=False``.
    """

    def __init__(self) -> None:
        self.revision = 0
        self.open: dict[str, CapabilityStart] = {}

    def stamp(self, event: Event) -> tuple[Event, TranscriptItem | None]:
        """``event`` as it is published, and the transcript item that records it (None for other events)."""
        if isinstance(event, PlanUpdate):
            self.revision += 1
            event = dataclasses.replace(event, revision=self.revision)
            return event, plan_item(event)
        if isinstance(event, CapabilityStart):
            self.open[event.scope] = event
            return event, start_item(event)
        if isinstance(event, CapabilityEnd):
            self.open.pop(event.scope, None)
            return event, end_item(event)
        return event, None

    def close_open(self, why: str) -> list[tuple[CapabilityEnd, TranscriptItem]]:
        """An ``ok=False`` end for every capability still open (in the order they started), and its item."""
        ends = [
            CapabilityEnd(kind=s.kind, name=s.name, scope=s.scope, output={"error": why}, ok=False)
            for s in self.open.values()
        ]
        self.open.clear()
        return [(e, end_item(e)) for e in ends]


def plan_item(event: PlanUpdate) -> TranscriptItem:
    items: list[dict[str, Any]] = [
        {k: v for k, v in dataclasses.asdict(i).items() if v not in (None, "")} for i in event.items
    ]
    data: dict[str, Any] = {"revision": event.revision, "source": event.source, "items": items}
    if event.explanation:
        data["explanation"] = event.explanation
    return TranscriptItem(kind="plan", text=event.explanation, data=data)


def start_item(event: CapabilityStart) -> TranscriptItem:
    return TranscriptItem(
        kind="capability_start",
        tool_use_id=event.scope,
        tool_name=event.name,
        input=event.input,
        data={"kind": event.kind},
    )


def end_item(event: CapabilityEnd) -> TranscriptItem:
    return TranscriptItem(
        kind="capability_end",
        tool_use_id=event.scope,
        tool_name=event.name,
        is_error=not event.ok,
        data={"kind": event.kind, "output": event.output},
    )
