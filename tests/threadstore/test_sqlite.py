"""SQLiteStore on one file: WAL, schema versions, rollback on bad input, busy timeout, handles and cancellation."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest

import adaptor_nb.threadstore as threadstore
from adaptor_nb._errors import ThreadBusyError, ThreadLeaseLostError
from adaptor_nb.driver import Checkpoint
from adaptor_nb.threadstore import FinalizeRequest, HistoryEntry, SQLiteStore
from adaptor_nb.threadstore._protocol import HISTORY_LIMIT, RECEIPT_LIMIT
from adaptor_nb.threadstore._sqlite import MIGRATIONS, SCHEMA_VERSION


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def cp(session: str, **data: object) -> Checkpoint:
    return Checkpoint(session_id=session, driver="reference", fingerprint="fp", run_id="r", data=dict(data))


@pytest.fixture
async def store(db_path: Path):  # type: ignore[no-untyped-def]
    s = SQLiteStore(db_path)
    yield s
    s.close()


def test_sqlite_store_is_exported_lazily() -> None:
    assert threadstore.SQLiteStore is SQLiteStore
    assert repr(SQLiteStore("x.sqlite")) == "SQLiteStore('x.sqlite')"


async def test_file_uses_wal_and_records_its_schema_version(store: SQLiteStore, db_path: Path) -> None:
    await store.resolve("k")
    with raw(db_path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        rows = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
        assert rows == [(v, name) for v, name, _ in MIGRATIONS]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"threads", "checkpoints", "receipts", "history", "leases", "schema_migrations"} <= tables


async def test_busy_timeout_is_set_on_the_connection(db_path: Path) -> None:
    store = SQLiteStore(db_path, busy_timeout=2.5)
    try:
        timeout = await store._call(lambda conn: conn.execute("PRAGMA busy_timeout").fetchone()[0])
        assert timeout == 2500
    finally:
        store.close()


async def test_migrations_apply_once_across_reopenings(db_path: Path) -> None:
    for _ in range(3):
        s = SQLiteStore(db_path)
        await s.resolve("k")
        s.close()
    with raw(db_path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(MIGRATIONS)


async def test_a_file_of_the_first_schema_is_upgraded_and_keeps_its_leases(db_path: Path) -> None:
    version, name, statements = MIGRATIONS[0]
    with raw(db_path) as conn:  # a file written before lease holders were recorded
        for statement in statements:
            conn.execute(statement)
        conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at REAL)")
        conn.execute("INSERT INTO schema_migrations VALUES (?, ?, 0)", (version, name))
        conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("INSERT INTO leases VALUES ('k', 'old-kernel', 'tok', ?, ?)", (time.time() + 600, time.time()))
    store = SQLiteStore(db_path)
    try:
        with pytest.raises(ThreadBusyError) as info:  # nothing is known of the old holder: its lease stands
            await store.acquire_lease("k", "new-kernel", 30)
        assert info.value.details["owner"] == "old-kernel"
        lease = await store.acquire_lease("other", "new-kernel", 30)
        assert lease.took_over == ""
    finally:
        store.close()
    with raw(db_path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        holder = conn.execute("SELECT holder_host, holder_pid FROM leases WHERE key = 'other'").fetchone()
        assert holder[0] and holder[1] > 0


async def test_a_newer_schema_is_refused_with_a_clear_error(db_path: Path) -> None:
    with raw(db_path) as conn:
        conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at REAL)")
        conn.execute("INSERT INTO schema_migrations VALUES (99, 'from the future', 0)")
        conn.execute("PRAGMA user_version = 99")
    store = SQLiteStore(db_path)
    try:
        with pytest.raises(RuntimeError, match="schema version 99, newer than"):
            await store.resolve("k")
    finally:
        store.close()


async def test_records_survive_closing_and_reopening(db_path: Path) -> None:
    first = SQLiteStore(db_path)
    lease = await first.acquire_lease("review", "kernel-1", 30)
    saved = await first.finalize(
        lease,
        FinalizeRequest(
            driver="reference",
            fingerprint="fp",
            checkpoint=cp("s1", turns=[1, 2]),
            receipts={"comment-17": time.time()},
            history=(HistoryEntry("assistant", "done", 1.5),),
            status="ok",
            run_id="r1",
            usage={"input_tokens": 5},
        ),
    )
    first.close()
    second = SQLiteStore(db_path)
    try:
        assert await second.resolve("review") == saved
        with pytest.raises(ThreadBusyError):
            await second.acquire_lease("review", "kernel-2", 30)
    finally:
        second.close()


async def test_two_handles_on_one_file_exclude_each_other(db_path: Path) -> None:
    a, b = SQLiteStore(db_path), SQLiteStore(db_path)
    try:
        lease = await a.acquire_lease("k", "owner-a", 30)
        with pytest.raises(ThreadBusyError) as busy:
            await b.acquire_lease("k", "owner-b", 30)
        assert busy.value.details["owner"] == "owner-a"
        saved = await a.finalize(lease, FinalizeRequest(status="from-a"))
        assert await b.resolve("k") == saved
        await a.release_lease(lease)
        await b.acquire_lease("k", "owner-b", 30)
    finally:
        a.close()
        b.close()


async def test_lease_lost_errors_say_why(store: SQLiteStore) -> None:
    lease = await store.acquire_lease("k", "owner-a", 0.1)
    await asyncio.sleep(max(0.0, lease.expires_at + 0.05 - time.time()))  # expiry is the behaviour under test
    with pytest.raises(ThreadLeaseLostError, match="expired"):
        await store.finalize(lease, FinalizeRequest())
    await store.acquire_lease("k", "owner-b", 30)
    with pytest.raises(ThreadLeaseLostError, match="owner 'owner-b' holds it now"):
        await store.renew_lease(lease, 30)
    await store.delete("k")
    with pytest.raises(ThreadLeaseLostError, match="released or never taken"):
        await store.finalize(lease, FinalizeRequest())


async def test_unsaveable_data_is_a_clear_error_and_changes_nothing(store: SQLiteStore) -> None:
    lease = await store.acquire_lease("k", "owner-a", 30)
    saved = await store.finalize(lease, FinalizeRequest(checkpoint=cp("s1"), status="ok"))
    with pytest.raises(TypeError, match="cannot save checkpoint data"):
        await store.finalize(lease, FinalizeRequest(checkpoint=cp("s2", bad=object()), status="broken"))
    assert await store.resolve("k") == saved
    again = await store.finalize(lease, FinalizeRequest(status="after"))
    assert again.runs == 2 and again.checkpoint == cp("s1")


async def test_child_rows_stay_bounded(store: SQLiteStore, db_path: Path) -> None:
    lease = await store.acquire_lease("k", "owner-a", 60)
    for i in range(30):
        now = time.time()
        await store.finalize(
            lease,
            FinalizeRequest(
                checkpoint=cp(f"s{i}"),
                archive_previous=True,
                receipts={f"m{i}-{j}": now for j in range(50)},
                history=(HistoryEntry("assistant", f"a{i}", now),),
            ),
        )
    with raw(db_path) as conn:
        count = {
            t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("receipts", "history", "checkpoints")
        }
    assert count == {"receipts": RECEIPT_LIMIT, "history": HISTORY_LIMIT, "checkpoints": HISTORY_LIMIT + 1}
    record = await store.resolve("k")
    assert record is not None and len(record.receipts) == RECEIPT_LIMIT and record.checkpoint == cp("s29")


async def test_a_locked_database_waits_then_fails_with_the_busy_timeout(db_path: Path) -> None:
    store = SQLiteStore(db_path, busy_timeout=0.2)
    try:
        await store.resolve("k")
        blocker = raw(db_path)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                await store.acquire_lease("k", "owner-a", 30)
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert (await store.acquire_lease("k", "owner-a", 30)).owner == "owner-a"
    finally:
        store.close()


async def test_a_cancelled_acquire_gives_the_lease_back(db_path: Path) -> None:
    store = SQLiteStore(db_path)
    try:
        await store.resolve("k")
        blocker = raw(db_path)
        blocker.execute("BEGIN IMMEDIATE")  # the acquire below waits inside SQLite for this write lock
        task = asyncio.ensure_future(store.acquire_lease("k", "owner-a", 600))
        executor = store._executor
        assert executor is not None
        await asyncio.sleep(0)  # the task submits the acquire to the store's worker thread
        # Yield until the worker thread has dequeued the acquire (it then waits inside SQLite for the lock).
        while not executor._work_queue.empty():  # noqa: ASYNC110
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        blocker.execute("ROLLBACK")
        blocker.close()
        await store.resolve("k")  # queued behind the acquire, so it has finished and handed its lease back
        lease = await store.acquire_lease("k", "owner-b", 30)
        assert lease.owner == "owner-b"
    finally:
        store.close()


async def test_close_then_use_again(store: SQLiteStore) -> None:
    lease = await store.acquire_lease("k", "owner-a", 30)
    store.close()
    store.close()
    saved = await store.finalize(lease, FinalizeRequest(status="after close"))
    assert saved.last_status == "after close"


def test_one_store_serves_successive_event_loops(db_path: Path) -> None:
    store = SQLiteStore(db_path)
    try:
        lease = asyncio.run(store.acquire_lease("k", "owner-a", 30))
        record = asyncio.run(store.finalize(lease, FinalizeRequest(status="second loop")))
        assert record.last_status == "second loop"
    finally:
        store.close()


async def test_parent_directories_are_created_and_home_is_expanded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    store = SQLiteStore("~/nested/dir/threads.sqlite")
    try:
        await store.resolve("k")
    finally:
        store.close()
    assert (tmp_path / "nested" / "dir" / "threads.sqlite").is_file()


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        (("",), {}, TypeError, "path must be a non-empty"),
        ((42,), {}, TypeError, "path must be a non-empty"),
        (("x.sqlite",), {"busy_timeout": 0}, ValueError, "busy_timeout must be positive"),
        (("x.sqlite",), {"synchronous": "OFF"}, ValueError, "synchronous must be"),
    ],
)
def test_bad_construction_arguments_name_the_option(
    args: tuple[object, ...], kwargs: dict[str, object], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        SQLiteStore(*args, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("key", "owner", "ttl", "match"),
    [("", "o", 1.0, "thread key"), ("k", "", 1.0, "lease owner"), ("k", "o", 0.0, "lease ttl")],
)
async def test_bad_lease_arguments_name_the_option(
    store: SQLiteStore, key: str, owner: str, ttl: float, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        await store.acquire_lease(key, owner, ttl)


async def test_an_older_file_is_migrated_forward_keeping_its_records(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from adaptor_nb.threadstore import _sqlite

    old = SQLiteStore(db_path)
    lease = await old.acquire_lease("k", "owner-a", 30)
    saved = await old.finalize(lease, FinalizeRequest(checkpoint=cp("s1"), status="ok"))
    old.close()

    added = (SCHEMA_VERSION + 1, "notes column", ("ALTER TABLE threads ADD COLUMN notes TEXT NOT NULL DEFAULT ''",))
    monkeypatch.setattr(_sqlite, "MIGRATIONS", (*MIGRATIONS, added))
    monkeypatch.setattr(_sqlite, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    new = SQLiteStore(db_path)
    try:
        assert await new.resolve("k") == saved
    finally:
        new.close()
    with raw(db_path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
        assert conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] == SCHEMA_VERSION + 1
        assert conn.execute("SELECT notes FROM threads WHERE key = 'k'").fetchone()[0] == ""
