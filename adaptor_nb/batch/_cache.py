"""A SQLite cache of row outcomes keyed on everything that decides a row's answer."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ._row import CACHED, OK, RowOutcome

DEFAULT_NAME = ".adaptor_nb_batch_cache.sqlite"


def cache_path(cache: str | Path | bool) -> Path | None:
    """``True``: next to the notebook (the working directory); a path: that file; ``False``: no cache."""
    if cache is False:
        return None
    if cache is True:
        return Path.cwd() / DEFAULT_NAME
    return Path(cache)


def cache_key(
    *, prompt: str, schema: dict[str, Any] | None, driver: str, fingerprint: str, model: str, workspace: str
) -> str:
    """A digest of the rendered prompt, the schema's JSON Schema, driver + config fingerprint, model, workspace."""
    blob = json.dumps(
        [prompt, schema, driver, fingerprint, model, workspace], sort_keys=True, separators=(",", ":"), default=str
    )
    return hashlib.sha256(blob.encode()).hexdigest()


class RowCache:
    """Stores only successful rows; a hit comes back marked ``cached`` with its original accounting."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(str(path))
        self._db.execute("CREATE TABLE IF NOT EXISTS rows (key TEXT PRIMARY KEY, outcome TEXT NOT NULL)")
        self._db.commit()

    def get(self, key: str) -> RowOutcome | None:
        row = self._db.execute("SELECT outcome FROM rows WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        out = RowOutcome(**data)
        out.status = CACHED
        return out

    def put(self, key: str, outcome: RowOutcome) -> None:
        if outcome.status != OK:
            return
        self._db.execute(
            "INSERT OR REPLACE INTO rows (key, outcome) VALUES (?, ?)", (key, json.dumps(asdict(outcome), default=str))
        )
        self._db.commit()

    def close(self) -> None:
        self._db.close()
