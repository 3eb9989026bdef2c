"""JSON encoding of the store's values (checkpoints, history entries, free-form maps) for durable stores."""

from __future__ import annotations

import json
from typing import Any

from ..driver._spi import Checkpoint
from ._protocol import HistoryEntry, ThreadRecord


def dump_json(value: Any, what: str) -> str:
    """Encode ``value`` as compact JSON, naming ``what`` when it holds something JSON cannot carry."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"thread store cannot save {what}: {exc}; "
            "use JSON values (str, int, float, bool, None, list, dict with str keys)"
        ) from exc


def load_json(text: str | None, default: Any) -> Any:
    """Decode JSON written by ``dump_json``; ``default`` stands in for NULL."""
    if text is None:
        return default
    return json.loads(text)


def checkpoint_to_row(cp: Checkpoint) -> tuple[str, str, str, str, float, str]:
    """The column values of one checkpoint row (session, driver, fingerprint, run, time, data)."""
    data = dump_json(cp.data, "checkpoint data")
    return (cp.session_id, cp.driver, cp.fingerprint, cp.run_id, cp.created_at, data)


def checkpoint_from_row(row: tuple[Any, ...]) -> Checkpoint:
    """Rebuild a checkpoint from the columns written by ``checkpoint_to_row``."""
    session_id, driver, fingerprint, run_id, created_at, data = row
    return Checkpoint(
        session_id=session_id,
        driver=driver,
        fingerprint=fingerprint,
        run_id=run_id,
        created_at=float(created_at),
        data=load_json(data, {}),
    )


def history_to_row(entry: HistoryEntry) -> tuple[str, str, float]:
    """The column values of one continuity history row (kind, text, time)."""
    return (entry.kind, entry.text, entry.at)


def history_from_row(row: tuple[Any, ...]) -> HistoryEntry:
    """Rebuild a history entry from the columns written by ``history_to_row``."""
    kind, text, at = row
    return HistoryEntry(kind=kind, text=text, at=float(at))


# The thread row both SQL stores write: its columns (after ``key``), the upsert's update clause, and its values.
THREAD_COLUMNS = "driver, fingerprint, created_at, updated_at, runs, last_status, last_run_id, usage, metadata"
THREAD_UPSERT = (
    "ON CONFLICT (key) DO UPDATE SET driver = excluded.driver, fingerprint = excluded.fingerprint, "
    "updated_at = excluded.updated_at, runs = excluded.runs, last_status = excluded.last_status, "
    "last_run_id = excluded.last_run_id, usage = excluded.usage, metadata = excluded.metadata"
)


def thread_row(record: ThreadRecord) -> tuple[Any, ...]:
    """The values of a thread row: ``key`` then ``THREAD_COLUMNS``."""
    return (
        record.key,
        record.driver,
        record.fingerprint,
        record.created_at,
        record.updated_at,
        record.runs,
        record.last_status,
        record.last_run_id,
        dump_json(record.usage, "usage"),
        dump_json(record.metadata, "thread metadata"),
    )
