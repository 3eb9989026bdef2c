"""The thread store contract: records, leases and the atomic finalize."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..driver._spi import Checkpoint

RECEIPT_TTL_SECONDS = 7 * 24 * 3600
RECEIPT_LIMIT = 1000
HISTORY_LIMIT = 16


@dataclass(frozen=True)
class Lease:
    """Proof that ``owner`` may write thread ``key`` until ``expires_at`` (epoch seconds)."""

    key: str
    owner: str
    token: str
    expires_at: float
    took_over: str = ""  # set when the lease was taken from a holder whose process had ended (who that was)


@dataclass(frozen=True)
class HistoryEntry:
    """One piece of bounded continuity history: an assistant turn or earlier supplemental guidance."""

    kind: str  # "assistant" | "guidance"
    text: str
    at: float = 0.0


@dataclass(frozen=True)
class ThreadRecord:
    """What a store keeps for one thread key."""

    key: str
    driver: str = ""
    fingerprint: str = ""
    checkpoint: Checkpoint | None = None
    receipts: dict[str, float] = field(default_factory=dict)
    history: tuple[HistoryEntry, ...] = ()
    archived: tuple[Checkpoint, ...] = ()
    created_at: float = 0.0
    updated_at: float = 0.0
    runs: int = 0
    last_status: str = ""
    last_run_id: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FinalizeRequest:
    """An atomic update applied under a valid lease.

    ``checkpoint`` replaces the record's checkpoint only when not None (a failed run passes None and keeps the old
    one); ``archive_previous`` moves the old checkpoint to ``archived`` (a fresh session after continuity fallback);
    ``require_absent`` makes the write fail with ThreadAlreadyExistsError if a record already has a checkpoint (fork).
    """

    driver: str = ""
    fingerprint: str = ""
    checkpoint: Checkpoint | None = None
    archive_previous: bool = False
    require_absent: bool = False
    receipts: dict[str, float] = field(default_factory=dict)
    history: tuple[HistoryEntry, ...] = ()
    status: str = ""
    run_id: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    count_run: bool = True
    runs: int = 1  # how many runs this request settles (more than one after an earlier save failed)


class Store(Protocol):
    """A thread store. Every method is safe to call concurrently; ``finalize`` is atomic."""

    async def resolve(self, key: str) -> ThreadRecord | None:
        """The record for ``key``, or None."""
        ...

    async def acquire_lease(self, key: str, owner: str, ttl: float) -> Lease:
        """Take the single-writer lease; raises ThreadBusyError if another owner holds an unexpired one."""
        ...

    async def renew_lease(self, lease: Lease, ttl: float) -> Lease:
        """Extend a lease; raises ThreadLeaseLostError if it is no longer held."""
        ...

    async def release_lease(self, lease: Lease) -> None:
        """Give the lease up (no error if it already expired or moved on)."""
        ...

    async def finalize(self, lease: Lease, request: FinalizeRequest) -> ThreadRecord:
        """Validate the lease, then save atomically; raises ThreadLeaseLostError / ThreadAlreadyExistsError."""
        ...

    async def list(self) -> list[ThreadRecord]:
        """Every record, newest first."""
        ...

    async def delete(self, key: str) -> bool:
        """Remove a record (and its lease); True if it existed."""
        ...


def prune_receipts(receipts: dict[str, float], now: float) -> dict[str, float]:
    """Keep receipts younger than 7 days, at most the newest 1000."""
    fresh = {k: t for k, t in receipts.items() if now - t < RECEIPT_TTL_SECONDS}
    if len(fresh) > RECEIPT_LIMIT:
        fresh = dict(sorted(fresh.items(), key=lambda kv: kv[1])[-RECEIPT_LIMIT:])
    return fresh


def merge_record(old: ThreadRecord | None, key: str, req: FinalizeRequest, now: float) -> ThreadRecord:
    """Apply ``req`` to ``old`` (the pure part of finalize shared by every store)."""
    from dataclasses import replace

    from .._errors import ThreadAlreadyExistsError

    base = old or ThreadRecord(key=key, created_at=now)
    if req.require_absent and old is not None and old.checkpoint is not None:
        raise ThreadAlreadyExistsError(f"thread {key!r} already exists", key=key)
    checkpoint = base.checkpoint
    archived = base.archived
    if req.checkpoint is not None:
        if req.archive_previous and base.checkpoint is not None:
            archived = (*archived, base.checkpoint)[-HISTORY_LIMIT:]
        checkpoint = req.checkpoint
    receipts = prune_receipts({**base.receipts, **req.receipts}, now)
    history = (*base.history, *req.history)[-HISTORY_LIMIT:]
    usage = dict(base.usage)
    for k, v in req.usage.items():
        usage[k] = usage.get(k, 0) + v
    return replace(
        base,
        driver=req.driver or base.driver,
        fingerprint=req.fingerprint or base.fingerprint,
        checkpoint=checkpoint,
        archived=archived,
        receipts=receipts,
        history=history,
        updated_at=now,
        runs=base.runs + (req.runs if req.count_run else 0),
        last_status=req.status or base.last_status,
        last_run_id=req.run_id or base.last_run_id,
        usage=usage,
    )
