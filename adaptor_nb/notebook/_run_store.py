"""The thread store of a headless run: in memory and fresh for the run, with a copy a restarted kernel reads.

A headless runner (nbconvert, nbclient, nbval, papermill) starts each run from an empty store, so two runs of a
notebook give the same outputs. Within a run, a kernel restart must not lose the threads: every finalized thread is
also written to a SQLite file named after the run (``_where.locate``), and a kernel of the same run that finds that
file starts from it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from ..threadstore import MemoryStore
from ..threadstore._protocol import FinalizeRequest, Lease, ThreadRecord

MIRROR_TTL = 30.0


class RunStore(MemoryStore):
    """A MemoryStore whose finalized threads are copied to ``path`` and read back from it by a restarted kernel."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        from ..threadstore._sqlite import SQLiteStore

        self.path = path
        self._file: Any = SQLiteStore(path)
        self._loaded = False

    async def _load(self) -> None:
        """Start from what an earlier kernel of this run wrote (once)."""
        if self._loaded:
            return
        self._loaded = True
        with contextlib.suppress(Exception):  # a copy that cannot be read leaves the run's threads fresh
            for record in await self._file.list():
                self._records.setdefault(record.key, record)

    async def resolve(self, key: str) -> ThreadRecord | None:
        await self._load()
        return await super().resolve(key)

    async def acquire_lease(self, key: str, owner: str, ttl: float) -> Lease:
        await self._load()
        return await super().acquire_lease(key, owner, ttl)

    async def list(self) -> list[ThreadRecord]:
        await self._load()
        return await super().list()

    async def finalize(self, lease: Lease, request: FinalizeRequest) -> ThreadRecord:
        record = await super().finalize(lease, request)
        with contextlib.suppress(Exception):  # the copy is for a restart; the run goes on without it
            copy = await self._file.acquire_lease(lease.key, lease.owner, MIRROR_TTL)
            try:
                await self._file.finalize(copy, request)
            finally:
                await self._file.release_lease(copy)
        return record

    async def delete(self, key: str) -> bool:
        with contextlib.suppress(Exception):
            await self._file.delete(key)
        return await super().delete(key)

    def close(self) -> None:
        """Close the copy's file."""
        with contextlib.suppress(Exception):
            self._file.close()
