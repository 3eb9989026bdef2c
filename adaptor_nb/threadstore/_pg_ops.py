"""The PostgreSQL store's transactions: leases on the database clock, the atomic finalize, records in bulk."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from .._errors import ThreadBusyError, ThreadLeaseLostError
from ._codec import (
    THREAD_COLUMNS,
    THREAD_UPSERT,
    checkpoint_from_row,
    checkpoint_to_row,
    history_from_row,
    history_to_row,
    load_json,
    thread_row,
)
from ._holder import Holder, take_over
from ._protocol import FinalizeRequest, Lease, ThreadRecord, merge_record

if TYPE_CHECKING:
    from psycopg import AsyncConnection, AsyncCursor

PAGE = 500  # records loaded per round of queries by list()

_NOW = "SELECT extract(epoch FROM clock_timestamp())::float8"
_CHECKPOINT_COLUMNS = "session_id, driver, fingerprint, run_id, created_at, data"


async def acquire(conn: AsyncConnection[Any], s: str, key: str, owner: str, ttl: float, me: Holder) -> Lease:
    """Two round trips: the lease row (locked) with the database time; then the write and the commit."""
    for _ in range(3):
        inserted: AsyncCursor[Any] | None = None
        async with conn.pipeline() as pipe, _pipelined_transaction(conn):
            cur = await conn.execute(
                f"SELECT owner, expires_at, holder_host, holder_pid, holder_started FROM {s}.leases "
                "WHERE key = %s FOR UPDATE",
                (key,),
            )
            clock = await conn.execute(_NOW)
            await pipe.sync()
            row = await cur.fetchone()
            now = await _clock(clock)
            took_over = take_over(key, owner, row, now, me)
            token = secrets.token_hex(16)
            values = (owner, token, now + ttl, now, me.host, me.pid, me.started, key)
            if row is not None:
                await conn.execute(
                    f"UPDATE {s}.leases SET owner = %s, token = %s, expires_at = %s, acquired_at = %s, "
                    "holder_host = %s, holder_pid = %s, holder_started = %s WHERE key = %s",
                    values,
                )
            else:
                inserted = await conn.execute(
                    f"INSERT INTO {s}.leases (owner, token, expires_at, acquired_at, holder_host, holder_pid, "
                    "holder_started, key) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (key) DO NOTHING "
                    "RETURNING key",
                    values,
                )
        if inserted is not None and await inserted.fetchone() is None:
            continue  # another process inserted the lease meanwhile: look again, now that its row exists
        return Lease(key=key, owner=owner, token=token, expires_at=now + ttl, took_over=took_over)
    raise ThreadBusyError(f"thread {key!r} is busy: other owners keep taking its lease; try again", key=key)


@contextlib.asynccontextmanager
async def _pipelined_transaction(conn: AsyncConnection[Any]) -> AsyncIterator[None]:
    """BEGIN ... COMMIT (ROLLBACK on an error) queued in the connection's pipeline: unlike ``conn.transaction()``,
    neither waits for a round trip of its own; they travel with the statements around them."""
    await conn.execute("BEGIN")
    try:
        yield
    except BaseException:
        await conn.execute("ROLLBACK")
        raise
    await conn.execute("COMMIT")


def _check_lease(row: Any, now: float, lease: Lease) -> None:
    """Raise ThreadLeaseLostError unless ``row`` (owner, token, expires_at of the locked lease row) is ``lease``."""
    if row is None:
        why = "it was released or never taken"
    elif row[0] != lease.owner or row[1] != lease.token:
        why = f"owner {row[0]!r} holds it now"
    elif row[2] <= now:
        why = f"it expired {now - row[2]:.1f}s ago"
    else:
        return
    raise ThreadLeaseLostError(f"lease on thread {lease.key!r} held by {lease.owner!r} was lost: {why}", key=lease.key)


async def _clock(cur: AsyncCursor[Any]) -> float:
    row = await cur.fetchone()
    assert row is not None
    return float(row[0])


async def renew(conn: AsyncConnection[Any], s: str, lease: Lease, ttl: float) -> Lease:
    async with conn.pipeline() as pipe, _pipelined_transaction(conn):
        locked = await conn.execute(
            f"SELECT owner, token, expires_at FROM {s}.leases WHERE key = %s FOR UPDATE", (lease.key,)
        )
        clock = await conn.execute(_NOW)
        await pipe.sync()
        now = await _clock(clock)
        _check_lease(await locked.fetchone(), now, lease)
        await conn.execute(f"UPDATE {s}.leases SET expires_at = %s WHERE key = %s", (now + ttl, lease.key))
    return Lease(key=lease.key, owner=lease.owner, token=lease.token, expires_at=now + ttl)


async def release(conn: AsyncConnection[Any], s: str, lease: Lease) -> None:
    await conn.execute(f"DELETE FROM {s}.leases WHERE key = %s AND token = %s", (lease.key, lease.token))


async def finalize(conn: AsyncConnection[Any], s: str, lease: Lease, request: FinalizeRequest) -> ThreadRecord:
    """Two round trips: the locked lease row, the database time and the record in one; then every write and the
    commit in the other (pipelined)."""
    async with conn.pipeline() as pipe, _pipelined_transaction(conn):
        locked = await conn.execute(
            f"SELECT owner, token, expires_at FROM {s}.leases WHERE key = %s FOR UPDATE", (lease.key,)
        )
        clock = await conn.execute(_NOW)
        loaded = await conn.execute(_load_sql(s), ([lease.key],))
        await pipe.sync()
        now = await _clock(clock)
        _check_lease(await locked.fetchone(), now, lease)
        old = _records(await loaded.fetchall()).get(lease.key)
        new = merge_record(old, lease.key, request, now)
        await _write_rows(conn, s, old, new, lease.key)
    return new


async def resolve(conn: AsyncConnection[Any], s: str, key: str) -> ThreadRecord | None:
    return (await _load(conn, s, [key])).get(key)  # one statement: one consistent snapshot


async def list_records(conn: AsyncConnection[Any], s: str) -> list[ThreadRecord]:
    """Every record, newest first, read from one snapshot a page of records per round of queries."""
    out: list[ThreadRecord] = []
    async with conn.transaction():
        await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        cur = await conn.execute(f"SELECT key FROM {s}.threads ORDER BY updated_at DESC, key")
        keys = [row[0] for row in await cur.fetchall()]
        for start in range(0, len(keys), PAGE):
            page = keys[start : start + PAGE]
            records = await _load(conn, s, page)
            out.extend(records[k] for k in page if k in records)
    return out


async def delete(conn: AsyncConnection[Any], s: str, key: str) -> bool:
    async with conn.transaction():
        cur = await conn.execute(f"DELETE FROM {s}.threads WHERE key = %s", (key,))
        existed = cur.rowcount > 0
        for table in ("checkpoints", "receipts", "history", "leases"):
            await conn.execute(f"DELETE FROM {s}.{table} WHERE key = %s", (key,))
    return existed


# --- record rows ------------------------------------------------------------------------------------------


def _load_sql(s: str) -> str:
    """One statement that reads whole records: each thread row with its checkpoints, history and receipts as JSON."""
    return (
        f"SELECT t.key, {', '.join('t.' + c for c in THREAD_COLUMNS.split(', '))}, "
        "(SELECT COALESCE(json_agg(json_build_array(c.slot, c.session_id, c.driver, c.fingerprint, c.run_id, "
        f"c.created_at, c.data) ORDER BY c.slot), '[]') FROM {s}.checkpoints c WHERE c.key = t.key), "
        "(SELECT COALESCE(json_agg(json_build_array(h.kind, h.text, h.at) ORDER BY h.position), '[]') "
        f"FROM {s}.history h WHERE h.key = t.key), "
        "(SELECT COALESCE(json_agg(json_build_array(r.message_id, r.delivered_at) ORDER BY r.delivered_at, r.seq), "
        f"'[]') FROM {s}.receipts r WHERE r.key = t.key) "
        f"FROM {s}.threads t WHERE t.key = ANY(%s)"
    )


async def _load(conn: AsyncConnection[Any], s: str, keys: list[str]) -> dict[str, ThreadRecord]:
    """The records of ``keys`` (those that exist), read in one statement (so from one snapshot)."""
    cur = await conn.execute(_load_sql(s), (keys,))
    return _records(await cur.fetchall())


def _records(rows: list[Any]) -> dict[str, ThreadRecord]:
    out: dict[str, ThreadRecord] = {}
    for row in rows:
        key, driver, fingerprint, created, updated, runs, status, run_id, usage, metadata, cps, hist, recs = row
        slots = [(slot, checkpoint_from_row(tuple(rest))) for slot, *rest in cps]
        out[key] = ThreadRecord(
            key=key,
            driver=driver,
            fingerprint=fingerprint,
            checkpoint=next((cp for slot, cp in slots if slot == 0), None),
            receipts={mid: float(at) for mid, at in recs},
            history=tuple(history_from_row(tuple(h)) for h in hist),
            archived=tuple(cp for slot, cp in slots if slot > 0),
            created_at=float(created),
            updated_at=float(updated),
            runs=int(runs),
            last_status=status,
            last_run_id=run_id,
            usage=load_json(usage, {}),
            metadata=load_json(metadata, {}),
        )
    return out


async def _write_rows(
    conn: AsyncConnection[Any], s: str, old: ThreadRecord | None, new: ThreadRecord, key: str
) -> None:
    await conn.execute(
        f"INSERT INTO {s}.threads (key, {THREAD_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
        + THREAD_UPSERT,
        thread_row(new),
    )
    async with conn.cursor() as cur:
        if old is None or old.checkpoint != new.checkpoint or old.archived != new.archived:
            await cur.execute(f"DELETE FROM {s}.checkpoints WHERE key = %s", (key,))
            slots = [(0, new.checkpoint)] if new.checkpoint is not None else []
            slots += list(enumerate(new.archived, start=1))
            if slots:
                await cur.executemany(
                    f"INSERT INTO {s}.checkpoints (key, slot, {_CHECKPOINT_COLUMNS}) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                    [(key, slot, *checkpoint_to_row(cp)) for slot, cp in slots],
                )
        if old is None or old.history != new.history:
            await cur.execute(f"DELETE FROM {s}.history WHERE key = %s", (key,))
            if new.history:
                await cur.executemany(
                    f"INSERT INTO {s}.history (key, position, kind, text, at) VALUES (%s, %s, %s, %s, %s)",
                    [(key, i, *history_to_row(h)) for i, h in enumerate(new.history)],
                )
        before = old.receipts if old is not None else {}
        gone = [mid for mid in before if mid not in new.receipts]
        changed = [(key, mid, at) for mid, at in new.receipts.items() if before.get(mid) != at]
        if gone:
            await cur.execute(f"DELETE FROM {s}.receipts WHERE key = %s AND message_id = ANY(%s)", (key, gone))
        if changed:
            await cur.executemany(
                f"INSERT INTO {s}.receipts (key, message_id, delivered_at) VALUES (%s, %s, %s) "
                "ON CONFLICT (key, message_id) DO UPDATE SET delivered_at = excluded.delivered_at",
                changed,
            )
