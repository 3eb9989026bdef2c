"""JSON encoding of the store's values (checkpoints, history entries, free-form maps) for durable stores."""

from __future__ import annotations

import json
from typing import Any

from ..driver._spi import Checkpoint
from ._protocol import HistoryEntry


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
