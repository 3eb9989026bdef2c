"""The in-process thread store: the default for scripts and direct use."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import replace

from .._errors import ThreadBusyError, ThreadLeaseLostError
from ._protocol import FinalizeRequest, Lease, ThreadRecord, merge_record


class MemoryStore:
    """A concurrency-safe store that lives as long as the process."""

    def __init__(self) -> None:
        self._records: dict[str, ThreadRecord] = {}
        self._leases: dict[str, Lease] = {}
        self._lock = asyncio.Lock()

    @staticmethod
    def _now() -> float:
        return time.time()

    @staticmethod
    def _detached(record: ThreadRecord) -> ThreadRecord:
        # Callers get their own maps, so editing a returned record never edits the stored one.
        return replace(record, receipts=dict(record.receipts), usage=dict(record.usage), metadata=dict(record.metadata))

    async def resolve(self, key: str) -> ThreadRecord | None:
        record = self._records.get(key)
        return None if record is None else self._detached(record)

    async def acquire_lease(self, key: str, owner: str, ttl: float) -> Lease:
        async with self._lock:
            now = self._now()
            held = self._leases.get(key)
            if held is not None and held.expires_at > now and held.owner != owner:
                raise ThreadBusyError(
                    f"thread {key!r} is busy: another run owns it; wait for that run to finish, "
                    "or use another thread key",
                    key=key,
                )
            lease = Lease(
                key=key,
                owner=owner,
                token=os.urandom(8).hex(),  # secrets.token_hex(8)
                expires_at=now + ttl,
            )
            self._leases[key] = lease
            return lease

    def _check(self, lease: Lease) -> None:
        held = self._leases.get(lease.key)
        if held is None or held.token != lease.token or held.owner != lease.owner or held.expires_at <= self._now():
            raise ThreadLeaseLostError(f"lease on thread {lease.key!r} was lost", key=lease.key)

    async def renew_lease(self, lease: Lease, ttl: float) -> Lease:
        async with self._lock:
            self._check(lease)
            renewed = Lease(lease.key, lease.owner, lease.token, self._now() + ttl)
            self._leases[lease.key] = renewed
            return renewed

    async def release_lease(self, lease: Lease) -> None:
        async with self._lock:
            held = self._leases.get(lease.key)
            if held is not None and held.token == lease.token:
                del self._leases[lease.key]

    async def finalize(self, lease: Lease, request: FinalizeRequest) -> ThreadRecord:
        async with self._lock:
            self._check(lease)
            record = merge_record(self._records.get(lease.key), lease.key, request, self._now())
            self._records[lease.key] = record
            return self._detached(record)

    async def list(self) -> list[ThreadRecord]:
        records = sorted(self._records.values(), key=lambda r: r.updated_at, reverse=True)
        return [self._detached(r) for r in records]

    async def delete(self, key: str) -> bool:
        async with self._lock:
            self._leases.pop(key, None)
            return self._records.pop(key, None) is not None
