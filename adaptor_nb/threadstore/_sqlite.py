"""A durable thread store on one SQLite file that several processes can share safely."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

from .._errors import ThreadLeaseLostError
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
from ._errors import store_error
from ._holder import Holder, current, take_over
from ._protocol import FinalizeRequest, Lease, ThreadRecord, merge_record

T = TypeVar("T")

# Each migration is (version, name, statements); versions only ever grow, and a released one never changes.
MIGRATIONS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (
        1,
        "threads, checkpoints, receipts, continuity history and leases",
        (
            """CREATE TABLE threads (
                key TEXT PRIMARY KEY,
                driver TEXT NOT NULL,
                fingerprint TEXT NOT NULL,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                runs INTEGER NOT NULL,
                last_status TEXT NOT NULL,
                last_run_id TEXT NOT NULL,
                usage TEXT NOT NULL,
                metadata TEXT NOT NULL
            )""",
            "CREATE INDEX threads_updated ON threads (updated_at)",
            # slot 0 is the current checkpoint; slots 1.. are archived ones, oldest first.
            """CREATE TABLE checkpoints (
                key TEXT NOT NULL,
                slot INTEGER NOT NULL,
                session_id TEXT NOT NULL,
                driver TEXT NOT NULL,
                fingerprint TEXT NOT NULL,
                run_id TEXT NOT NULL,
                created_at REAL NOT NULL,
                data TEXT NOT NULL,
                PRIMARY KEY (key, slot)
            )""",
            """CREATE TABLE receipts (
                key TEXT NOT NULL,
                message_id TEXT NOT NULL,
                delivered_at REAL NOT NULL,
                PRIMARY KEY (key, message_id)
            )""",
            """CREATE TABLE history (
                key TEXT NOT NULL,
                position INTEGER NOT NULL,
                kind TEXT NOT NULL,
                text TEXT NOT NULL,
                at REAL NOT NULL,
                PRIMARY KEY (key, position)
            )""",
            """CREATE TABLE leases (
                key TEXT PRIMARY KEY,
                owner TEXT NOT NULL,
                token TEXT NOT NULL,
                expires_at REAL NOT NULL,
                acquired_at REAL NOT NULL
            )""",
        ),
    ),
    (
        2,
        "lease holders: machine, process id and start time",
        (
            "ALTER TABLE leases ADD COLUMN holder_host TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE leases ADD COLUMN holder_pid INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE leases ADD COLUMN holder_started TEXT NOT NULL DEFAULT ''",
        ),
    ),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]


class SQLiteStore:
    """A thread store in one SQLite file (WAL mode), shared safely by the processes that open it.

    Example: ``Agent(driver, thread_store=SQLiteStore("review.adaptor_nb.sqlite"))``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 10.0,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
    ) -> None:
        if not isinstance(path, str | os.PathLike) or not os.fspath(path):
            raise TypeError(f"SQLiteStore path must be a non-empty str or path, got {path!r}")
        if busy_timeout <= 0:
            raise ValueError(f"SQLiteStore busy_timeout must be positive seconds, got {busy_timeout!r}")
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"SQLiteStore synchronous must be 'NORMAL' or 'FULL', got {synchronous!r}")
        self.path = Path(os.fspath(path)).expanduser()
        self.busy_timeout = float(busy_timeout)
        self.synchronous = synchronous
        self._conn: sqlite3.Connection | None = None
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._pid = os.getpid()
        # Handles inherited over fork() are kept, never closed: closing one in a child drops its file locks.
        self._inherited: list[object] = []

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"

    # --- plumbing: one worker thread owns the connection -----------------------------------------------

    def _worker(self) -> concurrent.futures.ThreadPoolExecutor:
        if self._pid != os.getpid():
            self._inherited.extend(x for x in (self._conn, self._executor) if x is not None)
            self._conn, self._executor, self._pid = None, None, os.getpid()
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="adaptor_nb-sqlite")
        return self._executor

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            self._enable_wal(conn)
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            self._migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _enable_wal(self, conn: sqlite3.Connection) -> None:
        """Switch the file to WAL. While several processes open a new file at once, the switch can report "locked"
        at once (SQLite does not run the busy handler when waiting could deadlock), so it is retried up to the busy
        timeout."""
        deadline = time.monotonic() + self.busy_timeout
        pause = 0.005
        while True:
            try:
                if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
                    return
                conn.execute("PRAGMA journal_mode = WAL").fetchone()
                return
            except sqlite3.OperationalError as exc:
                busy = "locked" in str(exc) or "busy" in str(exc)
                if not busy or time.monotonic() >= deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.1)

    def _migrate(self, conn: sqlite3.Connection) -> None:
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return
        with _write(conn):
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
            )
            current = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0]
            if current > SCHEMA_VERSION:
                raise RuntimeError(
                    f"thread store {self.path} has schema version {current}, newer than the {SCHEMA_VERSION} "
                    "this adaptor_nb understands; upgrade adaptor_nb or use another file"
                )
            for version, name, statements in MIGRATIONS:
                if version > current:
                    for statement in statements:
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                        (version, name, time.time()),
                    )
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _call_sync(self, fn: Callable[..., T], *args: Any) -> T:
        try:
            return fn(self._connection(), *args)
        except (sqlite3.Error, OSError) as exc:  # a damaged, missing or unwritable file: say which and what to do
            if _contended(exc):
                raise  # another process holds the file for now: the caller retries
            raise store_error(type(self).__name__, self.path, exc) from exc

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.wrap_future(self._worker().submit(self._call_sync, fn, *args))

    def close(self) -> None:
        """Close the database handle and its worker thread; the store reopens them if used again."""
        executor, self._executor = self._executor, None
        if executor is None or self._pid != os.getpid():
            return
        executor.submit(self._close_connection).result()
        executor.shutdown(wait=True)

    def _close_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    # --- the Store protocol ------------------------------------------------------------------------------

    async def resolve(self, key: str) -> ThreadRecord | None:
        """The record for ``key``, or None."""
        return await self._call(_resolve, key)

    async def acquire_lease(self, key: str, owner: str, ttl: float) -> Lease:
        """Take the single-writer lease; raises ThreadBusyError if another owner holds an unexpired one.

        An unexpired lease whose holder ran on this machine and whose process has ended is taken over at once
        (``Lease.took_over`` says from whom), so a killed or restarted kernel does not keep its threads busy.
        """
        _check_lease_args(key, owner, ttl)
        future = self._worker().submit(self._call_sync, _acquire, key, owner, ttl, current())
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            # The worker may still take the lease after the caller gave up; hand it back so the thread is not
            # blocked until the lease expires.
            future.add_done_callback(self._release_abandoned)
            raise

    def _release_abandoned(self, future: concurrent.futures.Future[Lease]) -> None:
        if future.cancelled() or future.exception() is not None:
            return
        lease = future.result()
        executor = self._executor
        if executor is not None:
            try:
                executor.submit(self._call_sync, _release, lease)
            except RuntimeError:  # the store was closed meanwhile; the lease simply expires
                pass

    async def renew_lease(self, lease: Lease, ttl: float) -> Lease:
        """Extend a lease; raises ThreadLeaseLostError if it is no longer held."""
        if ttl <= 0:
            raise ValueError(f"lease ttl must be positive seconds, got {ttl!r}")
        return await self._call(_renew, lease, ttl)

    async def release_lease(self, lease: Lease) -> None:
        """Give the lease up (no error if it already expired or moved on)."""
        await self._call(_release, lease)

    async def finalize(self, lease: Lease, request: FinalizeRequest) -> ThreadRecord:
        """Validate the lease and apply ``request`` in one IMMEDIATE transaction; returns the saved record."""
        return await self._call(_finalize, lease, request)

    async def list(self) -> list[ThreadRecord]:
        """Every record, newest first."""
        return await self._call(_list)

    async def delete(self, key: str) -> bool:
        """Remove a record (and its lease); True if it existed."""
        return await self._call(_delete, key)


# --- transactions (each runs on the store's worker thread) --------------------------------------------------


@contextmanager
def _write(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction that takes the database write lock up front (waiting up to the busy timeout)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


@contextmanager
def _read(conn: sqlite3.Connection) -> Iterator[None]:
    """One read transaction, so that a record's rows all come from the same commit."""
    conn.execute("BEGIN")
    try:
        yield
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")


def _contended(exc: BaseException) -> bool:
    text = str(exc)
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _check_lease_args(key: str, owner: str, ttl: float) -> None:
    if not isinstance(key, str) or not key:
        raise ValueError(f"thread key must be a non-empty string, got {key!r}")
    if not isinstance(owner, str) or not owner:
        raise ValueError(f"lease owner must be a non-empty string, got {owner!r}")
    if ttl <= 0:
        raise ValueError(f"lease ttl must be positive seconds, got {ttl!r}")


def _acquire(conn: sqlite3.Connection, key: str, owner: str, ttl: float, me: Holder) -> Lease:
    with _write(conn):
        now = time.time()
        row = conn.execute(
            "SELECT owner, expires_at, holder_host, holder_pid, holder_started FROM leases WHERE key = ?", (key,)
        ).fetchone()
        took_over = take_over(key, owner, row, now, me)
        lease = Lease(key=key, owner=owner, token=secrets.token_hex(16), expires_at=now + ttl, took_over=took_over)
        conn.execute(
            "INSERT INTO leases (key, owner, token, expires_at, acquired_at, holder_host, holder_pid, holder_started) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, token = excluded.token, "
            "expires_at = excluded.expires_at, acquired_at = excluded.acquired_at, "
            "holder_host = excluded.holder_host, holder_pid = excluded.holder_pid, "
            "holder_started = excluded.holder_started",
            (key, owner, lease.token, lease.expires_at, now, me.host, me.pid, me.started),
        )
    return lease


def _validate(conn: sqlite3.Connection, lease: Lease, now: float) -> None:
    row = conn.execute("SELECT owner, token, expires_at FROM leases WHERE key = ?", (lease.key,)).fetchone()
    if row is None:
        why = "it was released or never taken"
    elif row[0] != lease.owner or row[1] != lease.token:
        why = f"owner {row[0]!r} holds it now"
    elif row[2] <= now:
        why = f"it expired {now - row[2]:.1f}s ago"
    else:
        return
    raise ThreadLeaseLostError(f"lease on thread {lease.key!r} held by {lease.owner!r} was lost: {why}", key=lease.key)


def _renew(conn: sqlite3.Connection, lease: Lease, ttl: float) -> Lease:
    with _write(conn):
        now = time.time()
        _validate(conn, lease, now)
        conn.execute("UPDATE leases SET expires_at = ? WHERE key = ?", (now + ttl, lease.key))
    return Lease(key=lease.key, owner=lease.owner, token=lease.token, expires_at=now + ttl)


def _release(conn: sqlite3.Connection, lease: Lease) -> None:
    conn.execute("DELETE FROM leases WHERE key = ? AND token = ?", (lease.key, lease.token))


def _finalize(conn: sqlite3.Connection, lease: Lease, request: FinalizeRequest) -> ThreadRecord:
    with _write(conn):
        now = time.time()
        _validate(conn, lease, now)
        old = _load(conn, lease.key)
        new = merge_record(old, lease.key, request, now)
        _save(conn, old, new)
    return new


def _resolve(conn: sqlite3.Connection, key: str) -> ThreadRecord | None:
    with _read(conn):
        return _load(conn, key)


_PAGE = 500  # records list() loads per round of queries


def _list(conn: sqlite3.Connection) -> list[ThreadRecord]:
    """Every record, newest first: four queries per page of records, not four per record."""
    out: list[ThreadRecord] = []
    with _read(conn):
        keys = [row[0] for row in conn.execute("SELECT key FROM threads ORDER BY updated_at DESC, key")]
        for start in range(0, len(keys), _PAGE):
            page = keys[start : start + _PAGE]
            records = _load_many(conn, page)
            out.extend(records[k] for k in page if k in records)
    return out


def _delete(conn: sqlite3.Connection, key: str) -> bool:
    with _write(conn):
        existed = conn.execute("DELETE FROM threads WHERE key = ?", (key,)).rowcount > 0
        for table in ("checkpoints", "receipts", "history", "leases"):
            conn.execute(f"DELETE FROM {table} WHERE key = ?", (key,))
    return existed


# --- record rows ------------------------------------------------------------------------------------------

_CHECKPOINT_COLUMNS = "session_id, driver, fingerprint, run_id, created_at, data"


def _load(conn: sqlite3.Connection, key: str) -> ThreadRecord | None:
    row = conn.execute(f"SELECT {THREAD_COLUMNS} FROM threads WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    driver, fingerprint, created_at, updated_at, runs, last_status, last_run_id, usage, metadata = row
    slots = conn.execute(
        f"SELECT slot, {_CHECKPOINT_COLUMNS} FROM checkpoints WHERE key = ? ORDER BY slot", (key,)
    ).fetchall()
    current = next((checkpoint_from_row(s[1:]) for s in slots if s[0] == 0), None)
    archived = tuple(checkpoint_from_row(s[1:]) for s in slots if s[0] > 0)
    history = tuple(
        history_from_row(h)
        for h in conn.execute("SELECT kind, text, at FROM history WHERE key = ? ORDER BY position", (key,))
    )
    receipts = {
        mid: float(at)
        for mid, at in conn.execute(
            "SELECT message_id, delivered_at FROM receipts WHERE key = ? ORDER BY delivered_at, rowid", (key,)
        )
    }
    return ThreadRecord(
        key=key,
        driver=driver,
        fingerprint=fingerprint,
        checkpoint=current,
        receipts=receipts,
        history=history,
        archived=archived,
        created_at=float(created_at),
        updated_at=float(updated_at),
        runs=int(runs),
        last_status=last_status,
        last_run_id=last_run_id,
        usage=load_json(usage, {}),
        metadata=load_json(metadata, {}),
    )


def _load_many(conn: sqlite3.Connection, keys: list[str]) -> dict[str, ThreadRecord]:
    """The records of ``keys`` (those that exist), read in four queries."""
    marks = ",".join("?" * len(keys))
    threads = {
        row[0]: row[1:]
        for row in conn.execute(f"SELECT key, {THREAD_COLUMNS} FROM threads WHERE key IN ({marks})", keys)
    }
    current: dict[str, Any] = {}
    archived: dict[str, list[Any]] = {k: [] for k in threads}
    for row in conn.execute(
        f"SELECT key, slot, {_CHECKPOINT_COLUMNS} FROM checkpoints WHERE key IN ({marks}) ORDER BY key, slot", keys
    ):
        if row[0] in threads:
            if row[1] == 0:
                current[row[0]] = checkpoint_from_row(row[2:])
            else:
                archived[row[0]].append(checkpoint_from_row(row[2:]))
    history: dict[str, list[Any]] = {k: [] for k in threads}
    for row in conn.execute(
        f"SELECT key, kind, text, at FROM history WHERE key IN ({marks}) ORDER BY key, position", keys
    ):
        if row[0] in threads:
            history[row[0]].append(history_from_row(row[1:]))
    receipts: dict[str, dict[str, float]] = {k: {} for k in threads}
    for key, mid, at in conn.execute(
        f"SELECT key, message_id, delivered_at FROM receipts WHERE key IN ({marks}) ORDER BY key, delivered_at, rowid",
        keys,
    ):
        if key in threads:
            receipts[key][mid] = float(at)
    return {
        key: ThreadRecord(
            key=key,
            driver=driver,
            fingerprint=fingerprint,
            checkpoint=current.get(key),
            receipts=receipts[key],
            history=tuple(history[key]),
            archived=tuple(archived[key]),
            created_at=float(created_at),
            updated_at=float(updated_at),
            runs=int(runs),
            last_status=last_status,
            last_run_id=last_run_id,
            usage=load_json(usage, {}),
            metadata=load_json(metadata, {}),
        )
        for key, (
            driver,
            fingerprint,
            created_at,
            updated_at,
            runs,
            last_status,
            last_run_id,
            usage,
            metadata,
        ) in threads.items()
    }


def _save(conn: sqlite3.Connection, old: ThreadRecord | None, new: ThreadRecord) -> None:
    """Write ``new`` over ``old``, touching only the rows that changed (receipts can number a thousand)."""
    key = new.key
    conn.execute(
        f"INSERT INTO threads (key, {THREAD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) " + THREAD_UPSERT,
        thread_row(new),
    )
    if old is None or old.checkpoint != new.checkpoint or old.archived != new.archived:
        conn.execute("DELETE FROM checkpoints WHERE key = ?", (key,))
        slots = [(0, new.checkpoint)] if new.checkpoint is not None else []
        slots += list(enumerate(new.archived, start=1))
        conn.executemany(
            f"INSERT INTO checkpoints (key, slot, {_CHECKPOINT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(key, slot, *checkpoint_to_row(cp)) for slot, cp in slots],
        )
    if old is None or old.history != new.history:
        conn.execute("DELETE FROM history WHERE key = ?", (key,))
        conn.executemany(
            "INSERT INTO history (key, position, kind, text, at) VALUES (?, ?, ?, ?, ?)",
            [(key, i, *history_to_row(h)) for i, h in enumerate(new.history)],
        )
    before = old.receipts if old is not None else {}
    gone = [(key, mid) for mid in before if mid not in new.receipts]
    changed = [(key, mid, at) for mid, at in new.receipts.items() if before.get(mid) != at]
    if gone:
        conn.executemany("DELETE FROM receipts WHERE key = ? AND message_id = ?", gone)
    if changed:
        conn.executemany(
            "INSERT INTO receipts (key, message_id, delivered_at) VALUES (?, ?, ?) "
            "ON CONFLICT (key, message_id) DO UPDATE SET delivered_at = excluded.delivered_at",
            changed,
        )
