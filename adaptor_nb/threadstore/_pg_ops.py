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

# The pool's connections commit without waiting for the disk (lease changes); a save or delete that must be durable
# says so for its own transaction (SET LOCAL, as an expression so that it can ride along with another query).
_DURABLE = "set_config('synchronous_commit', 'on', true)"
_NOW = "SELECT extract(epoch FROM clock_timestamp())::float8"
_CHECKPOINT_COLUMNS = "session_id, driver, fingerprint, run_id, created_at, data"


async def acquire(conn: AsyncConnection[Any], s: str, key: str, owner: str, ttl: float, me: Holder) -> Lease:
    """One round trip when the lease is free, expired or the owner's own (one statement decides and writes it);
    otherwise two: the lease row (locked) with the database time, judged here (is its holder gone?); then the
    write and the commit."""
    token = secrets.token_hex(16)
    cur = await conn.execute(
        f"WITH clock AS ({_NOW} AS now) INSERT INTO {s}.leases AS l (key, owner, token, expires_at, acquired_at, "
        "holder_host, holder_pid, holder_started) SELECT %s, %s, %s, now + %s, now, %s, %s, %s FROM clock "
        "ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, token = excluded.token, "
        "expires_at = excluded.expires_at, acquired_at = excluded.acquired_at, holder_host = excluded.holder_host, "
        "holder_pid = excluded.holder_pid, holder_started = excluded.holder_started "
        "WHERE l.expires_at <= excluded.acquired_at OR l.owner = excluded.owner RETURNING l.expires_at",
        (key, owner, token, ttl, me.host, me.pid, me.started),
    )
    row = await cur.fetchone()
    if row is not None:
        return Lease(key=key, owner=owner, token=token, expires_at=float(row[0]))
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


async def finalize(
    conn: AsyncConnection[Any], s: str, lease: Lease, request: FinalizeRequest, durable: bool
) -> ThreadRecord:
    """Two round trips: the lease row (locked), then the database time and the record, each statement taking its
    snapshot after the lock (so the record is the last one committed); then one statement that writes every table,
    and the commit (which waits for the server's disk when ``durable``)."""
    async with conn.pipeline() as pipe, _pipelined_transaction(conn):
        locked = await conn.execute(
            f"SELECT owner, token, expires_at FROM {s}.leases WHERE key = %s FOR UPDATE", (lease.key,)
        )
        clock = await conn.execute(f"{_NOW}, {_DURABLE}" if durable else _NOW)
        loaded = await conn.execute(_load_sql(s), ([lease.key],))
        await pipe.sync()
        now = await _clock(clock)
        _check_lease(await locked.fetchone(), now, lease)
        old = _records(await loaded.fetchall()).get(lease.key)
        new = merge_record(old, lease.key, request, now)
        sql, args = _write_sql(s, old, new, lease.key)
        await conn.execute(sql, args)
    return new


async def resolve(conn: AsyncConnection[Any], s: str, key: str) -> ThreadRecord | None:
    return (await _load(conn, s, [key])).get(key)  # one statement: one consistent snapshot


async def list_records(conn: AsyncConnection[Any], s: str) -> list[ThreadRecord]:
    """Every record, newest first, read from one snapshot a page of records per round of queries."""
    out: list[ThreadRecord] = []
    async with conn.transaction():
        await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        # Planned afresh each time (not prepared): a plan kept from when the tables were small would still be used
        # after they grew, until the server next analyzes them (measured: 2.5x slower at 10,000 threads).
        cur = await conn.execute(f"SELECT key FROM {s}.threads ORDER BY updated_at DESC, key", prepare=False)
        keys = [row[0] for row in await cur.fetchall()]
        for start in range(0, len(keys), PAGE):
            page = keys[start : start + PAGE]
            records = await _load(conn, s, page, prepare=False)
            out.extend(records[k] for k in page if k in records)
    return out


async def delete(conn: AsyncConnection[Any], s: str, key: str, durable: bool) -> bool:
    async with conn.transaction():
        if durable:
            await conn.execute(f"SELECT {_DURABLE}")
        cur = await conn.execute(f"DELETE FROM {s}.threads WHERE key = %s", (key,))
        existed = cur.rowcount > 0
        for table in ("checkpoints", "receipts", "history", "leases"):
            await conn.execute(f"DELETE FROM {s}.{table} WHERE key = %s", (key,))
    return existed


# --- record rows ------------------------------------------------------------------------------------------


def _load_sql(s: str) -> str:
    """One statement that reads whole records: each thread row with its checkpoints, history and receipts as JSON."""
    # The keys are joined (not matched with = ANY): each is looked up in the primary key whatever the server's
    # statistics say, where a filter over a whole table costs as many comparisons per row as there are keys.
    return f"SELECT {_record_columns(s)} FROM unnest(%s::text[]) AS k(key) JOIN {s}.threads t ON t.key = k.key"


def _record_columns(s: str) -> str:
    """A whole record from thread row ``t``: its columns, then its checkpoints, history and receipts as JSON."""
    return (
        f"t.key, {', '.join('t.' + c for c in THREAD_COLUMNS.split(', '))}, "
        "(SELECT COALESCE(json_agg(json_build_array(c.slot, c.session_id, c.driver, c.fingerprint, c.run_id, "
        f"c.created_at, c.data) ORDER BY c.slot), '[]') FROM {s}.checkpoints c WHERE c.key = t.key), "
        "(SELECT COALESCE(json_agg(json_build_array(h.kind, h.text, h.at) ORDER BY h.position), '[]') "
        f"FROM {s}.history h WHERE h.key = t.key), "
        "(SELECT COALESCE(json_agg(json_build_array(r.message_id, r.delivered_at) ORDER BY r.delivered_at, r.seq), "
        f"'[]') FROM {s}.receipts r WHERE r.key = t.key)"
    )


async def _load(
    conn: AsyncConnection[Any], s: str, keys: list[str], *, prepare: bool | None = None
) -> dict[str, ThreadRecord]:
    """The records of ``keys`` (those that exist), read in one statement (so from one snapshot)."""
    cur = await conn.execute(_load_sql(s), (keys,), prepare=prepare)
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


def _write_sql(s: str, old: ThreadRecord | None, new: ThreadRecord, key: str) -> tuple[str, list[Any]]:
    """One statement that turns ``old`` into ``new``: the thread row's upsert, led by data-modifying CTEs for the
    tables that changed. Each CTE touches rows no other one does (rows upserted, rows beyond them deleted), so they
    can share a statement; row lists travel as arrays unnested on the server."""
    ctes: list[str] = []
    args: list[Any] = []
    if old is None or old.checkpoint != new.checkpoint or old.archived != new.archived:
        slots = [(0, new.checkpoint)] if new.checkpoint is not None else []
        slots += list(enumerate(new.archived, start=1))
        cp_rows = [(slot, *checkpoint_to_row(cp)) for slot, cp in slots]
        ctes.append(f"cd AS (DELETE FROM {s}.checkpoints WHERE key = %s AND NOT slot = ANY(%s::int[]))")
        args += [key, [slot for slot, _ in slots]]
        if cp_rows:
            ctes.append(
                f"ci AS (INSERT INTO {s}.checkpoints (key, slot, {_CHECKPOINT_COLUMNS}) SELECT %s, * FROM "
                "unnest(%s::int[], %s::text[], %s::text[], %s::text[], %s::text[], %s::float8[], %s::text[]) "
                "ON CONFLICT (key, slot) DO UPDATE SET "
                + ", ".join(f"{c} = excluded.{c}" for c in _CHECKPOINT_COLUMNS.split(", "))
                + ")"
            )
            args += [key, *_columns(cp_rows, 7)]
    if old is None or old.history != new.history:
        ctes.append(f"hd AS (DELETE FROM {s}.history WHERE key = %s AND position >= %s)")
        args += [key, len(new.history)]
        if new.history:
            history_rows = [(i, *history_to_row(h)) for i, h in enumerate(new.history)]
            ctes.append(
                f"hi AS (INSERT INTO {s}.history (key, position, kind, text, at) SELECT %s, * FROM "
                "unnest(%s::int[], %s::text[], %s::text[], %s::float8[]) ON CONFLICT (key, position) DO UPDATE "
                "SET kind = excluded.kind, text = excluded.text, at = excluded.at)"
            )
            args += [key, *_columns(history_rows, 4)]
    before = old.receipts if old is not None else {}
    gone = [mid for mid in before if mid not in new.receipts]
    changed = [(mid, at) for mid, at in new.receipts.items() if before.get(mid) != at]
    if gone:
        ctes.append(f"rd AS (DELETE FROM {s}.receipts WHERE key = %s AND message_id = ANY(%s::text[]))")
        args += [key, gone]
    if changed:
        # Receipts keep their order of arrival (the seq column): the rows are inserted in array order.
        ctes.append(
            f"ri AS (INSERT INTO {s}.receipts (key, message_id, delivered_at) SELECT %s, r.message_id, "
            "r.delivered_at FROM unnest(%s::text[], %s::float8[]) WITH ORDINALITY AS r(message_id, delivered_at, n) "
            "ORDER BY r.n ON CONFLICT (key, message_id) DO UPDATE SET delivered_at = excluded.delivered_at)"
        )
        args += [key, *_columns(changed, 2)]
    upsert = (
        f"INSERT INTO {s}.threads (key, {THREAD_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
        + THREAD_UPSERT
    )
    args += list(thread_row(new))
    return (f"WITH {', '.join(ctes)} {upsert}" if ctes else upsert), args


def _columns(rows: list[tuple[Any, ...]], width: int) -> list[list[Any]]:
    """Rows turned into ``width`` column lists (the arrays of an unnest)."""
    return [[row[i] for row in rows] for i in range(width)]
