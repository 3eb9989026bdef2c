"""The session recorder: a run's events as JSONL records with their coordinates, and their replay."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._events import Done, Event, EventMeta, TurnEnd, with_meta
from .._lossless import dumps
from ._codec import EVENT_TYPES, _hints, decode, encode, error_identity
from ._exposure import ExposurePolicy

HEADER = {"cassette": "adaptor_nb-cassette", "version": 1}
"""The same first line as a driver cassette: one file format, events and process frames side by side."""


@dataclass(frozen=True)
class EventRecord:
    """One recorded event: its kind, coordinates (``meta``), public data and opted-in private ``diagnostics``."""

    kind: str
    meta: EventMeta
    data: dict[str, Any]
    diagnostics: dict[str, Any] = field(default_factory=dict)

    def event(self) -> Event:
        """The event again, with its recorded coordinates restored (no live approval responder)."""
        cls = EVENT_TYPES.get(self.kind)
        if cls is None:
            raise ValueError(f"unknown event kind {self.kind!r} in a recording")
        hints = _hints(cls)
        fields = {k: decode(v, hints.get(k, Any)) for k, v in self.data.items() if k in hints and k != "meta"}
        return with_meta(cls(**fields), self.meta)

    def line(self) -> dict[str, Any]:
        out: dict[str, Any] = {"event": self.kind, "meta": encode(self.meta), "data": self.data}
        if self.diagnostics:
            out["diagnostics"] = self.diagnostics
        return out

    @classmethod
    def from_line(cls, line: dict[str, Any]) -> EventRecord:
        meta = decode(line.get("meta") or {}, EventMeta)
        return cls(str(line["event"]), meta, dict(line.get("data") or {}), dict(line.get("diagnostics") or {}))


def to_record(event: Event, exposure: ExposurePolicy) -> EventRecord:
    """``event`` as a record; ``Done`` and ``TurnEnd`` keep only what ``exposure`` allows of their result."""
    if isinstance(event, Done | TurnEnd):
        data: dict[str, Any] = {"result": exposure.result(event.result)}
        if event.err is not None:
            data["err"] = error_identity(event.err)
        if isinstance(event, TurnEnd):
            data.update(turn=event.turn, message_ids=list(event.message_ids))
        return EventRecord(type(event).__name__, event.meta, data, exposure.diagnostics(event.result))
    data = encode(event)
    data.pop("meta", None)
    return EventRecord(type(event).__name__, event.meta, data)


class SessionRecorder:
    """Records every event it is given, in order, optionally appending each as a line to ``path``.

    ``exposure`` decides how much of the final results is kept (see ExposurePolicy). Feed it with
    ``record(event)`` or let it drain a stream with ``await recorder.consume(stream)``.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, exposure: ExposurePolicy | None = None):
        self.path = Path(path) if path is not None else None
        self.exposure = exposure or ExposurePolicy()
        self.records: list[EventRecord] = []

    def __repr__(self) -> str:
        return f"SessionRecorder(path={str(self.path) if self.path else None!r}, records={len(self.records)})"

    def record(self, event: Event) -> EventRecord:
        rec = to_record(event, self.exposure)
        self.records.append(rec)
        if self.path is not None:
            new = not self.path.exists() or self.path.stat().st_size == 0
            with self.path.open("a", encoding="utf-8") as fh:
                if new:
                    fh.write(json.dumps(HEADER) + "\n")
                fh.write(dumps(rec.line(), compact=False) + "\n")
        return rec

    async def consume(self, stream: Any) -> Done | None:
        """Record every event of ``stream`` until it ends; returns its Done event."""
        done: Done | None = None
        async for event in stream.events():
            self.record(event)
            if isinstance(event, Done):
                done = event
        return done


def load(path: str | os.PathLike[str]) -> list[EventRecord]:
    """The event records in the file at ``path`` (process frames of a driver cassette are skipped)."""
    out: list[EventRecord] = []
    with Path(path).open(encoding="utf-8") as fh:
        for raw in fh:
            if raw.strip():
                line = json.loads(raw)
                if "event" in line:
                    out.append(EventRecord.from_line(line))
    return out


def replay(records: Iterable[EventRecord] | str | os.PathLike[str]) -> Iterator[Event]:
    """The recorded events again, in order, each with its recorded coordinates."""
    source = load(records) if isinstance(records, str | os.PathLike) else records
    for rec in source:
        yield rec.event()


async def areplay(records: Iterable[EventRecord] | str | os.PathLike[str]) -> AsyncIterator[Event]:
    """``replay`` as an async iterator, for code written against ``Stream.events()``."""
    for event in replay(records):
        yield event
