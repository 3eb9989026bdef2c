"""The Postgres store on a real server: loading, connection strings, bad input, schema creation and migrations."""

from __future__ import annotations

import pickle
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable

import psycopg
import pytest

from adaptor_nb.threadstore import FinalizeRequest, PostgresStore, ThreadStoreError
from adaptor_nb.threadstore._pg_schema import MIGRATIONS, SCHEMA_VERSION, migrate

from .pg_cluster import PASSWORD, USER, Cluster, free_port

Factory = Callable[..., PostgresStore]


def versions(cluster: Cluster, schema: str) -> list[int]:
    with psycopg.connect(cluster.dsn(), autocommit=True) as conn:
        rows = conn.execute(f'SELECT version FROM "{schema}".schema_migrations ORDER BY version').fetchall()
    return [int(r[0]) for r in rows]


# --- loading --------------------------------------------------------------------------------------------


def test_import_adaptor_nb_does_not_load_psycopg() -> None:
    code = "import sys, adaptor_nb, adaptor_nb.threadstore; print('psycopg' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "False"


def test_without_the_extra_the_error_names_it() -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "from adaptor_nb.threadstore import Postgres\n"
        "try:\n    Postgres('postgresql://u@h/db')\n"
        "except ImportError as exc:\n    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert "pip install 'adaptor_nb[postgres]'" in out.stdout


def test_postgres_is_the_store_class() -> None:
    from adaptor_nb import threadstore

    assert threadstore.Postgres is PostgresStore


# --- the password stays hidden --------------------------------------------------------------------------


def test_repr_and_dsn_hide_the_password(pg_cluster: Cluster) -> None:
    store = PostgresStore(pg_cluster.dsn(), schema="shown")
    assert PASSWORD not in repr(store) and PASSWORD not in store.dsn and PASSWORD not in str(vars(store).get("dsn"))
    assert repr(store) == f"Postgres('postgresql://{USER}@127.0.0.1:{pg_cluster.port}/postgres', schema='shown')"


async def test_a_pickled_store_works_in_its_new_home(pg_factory: Factory) -> None:
    store = pg_factory()
    copy = pickle.loads(pickle.dumps(store))
    assert repr(copy) == repr(store)
    lease = await copy.acquire_lease("k", "a", 30)
    await copy.finalize(lease, FinalizeRequest(status="from-copy"))
    record = await store.resolve("k")
    assert record is not None and record.last_status == "from-copy"
    await copy.aclose()
    await store.aclose()


# --- bad input: each fails before any run, naming what to fix, without the password -----------------------


@pytest.mark.parametrize(
    "dsn",
    ["host=127.0.0.1 password=hunter2-Secret = oops", "postgresql://u:hunter2-Secret@h:5432/db?nonsense=1"],
)
def test_malformed_dsn_fails_at_construction(dsn: str) -> None:
    with pytest.raises(ValueError, match="connection string is malformed") as info:
        PostgresStore(dsn)
    assert "hunter2-Secret" not in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no traceback shows the parse error


@pytest.mark.parametrize("bad", ["", "   "])
def test_empty_dsn_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="needs a connection string"):
        PostgresStore(bad)


@pytest.mark.parametrize("schema", ["", "Upper", "a-b", "x" * 64, 'a"; drop'])
def test_bad_schema_name_is_refused(schema: str) -> None:
    with pytest.raises(ValueError, match="schema must be a lower-case SQL name"):
        PostgresStore("postgresql://u@h/db", schema=schema)


@pytest.mark.timeout(60)
async def test_unreachable_server_fails_in_bounded_time(pg_cluster: Cluster) -> None:
    store = PostgresStore(pg_cluster.dsn(port=free_port()), connect_timeout=2)
    with pytest.raises(ThreadStoreError, match="cannot be reached: check that it is running") as info:
        await store.resolve("k")
    assert PASSWORD not in str(info.value) and info.value.details["dsn"] == store.dsn


@pytest.mark.timeout(60)
async def test_a_port_that_never_answers_fails_within_the_connect_timeout() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:  # accepts connections, never says a word
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        store = PostgresStore(f"postgresql://u:{PASSWORD}@127.0.0.1:{port}/db", connect_timeout=1)
        with pytest.raises(ThreadStoreError, match="cannot be reached") as info:
            await store.resolve("k")
    assert PASSWORD not in str(info.value) and "timeout" in str(info.value).lower()


@pytest.mark.timeout(60)
async def test_wrong_password_names_the_credentials(pg_cluster: Cluster) -> None:
    store = PostgresStore(pg_cluster.dsn(password="Wrong-Pass-91"))
    with pytest.raises(ThreadStoreError, match="fix the credentials") as info:
        await store.resolve("k")
    assert "Wrong-Pass-91" not in str(info.value) and "Wrong-Pass-91" not in repr(info.value.details)


@pytest.mark.timeout(60)
async def test_missing_database_names_it(pg_cluster: Cluster) -> None:
    store = PostgresStore(pg_cluster.dsn(dbname="no_such_db"))
    with pytest.raises(ThreadStoreError, match="the database does not exist: create it") as info:
        await store.resolve("k")
    assert "no_such_db" in str(info.value) and PASSWORD not in str(info.value)


# --- schema -----------------------------------------------------------------------------------------------


async def test_first_use_creates_the_schema_with_its_version(pg_cluster: Cluster, pg_factory: Factory) -> None:
    store = pg_factory()
    assert await store.resolve("k") is None
    assert versions(pg_cluster, store.schema) == [m[0] for m in MIGRATIONS]
    await store.aclose()


async def test_a_newer_schema_is_refused_untouched(pg_cluster: Cluster, pg_factory: Factory) -> None:
    store = pg_factory()
    lease = await store.acquire_lease("k", "a", 30)
    await store.finalize(lease, FinalizeRequest(status="kept"))
    await store.aclose()
    with psycopg.connect(pg_cluster.dsn(), autocommit=True) as conn:
        conn.execute(f'INSERT INTO "{store.schema}".schema_migrations (version, name) VALUES (99, %s)', ("future",))
    again = PostgresStore(pg_cluster.dsn(), schema=store.schema)
    with pytest.raises(ThreadStoreError, match=f"schema version 99, newer than the {SCHEMA_VERSION}.*upgrade"):
        await again.resolve("k")
    with psycopg.connect(pg_cluster.dsn(), autocommit=True) as conn:
        row = conn.execute(f'SELECT last_status FROM "{store.schema}".threads').fetchone()
    assert row == ("kept",)


async def test_an_older_schema_is_migrated_forward(pg_cluster: Cluster) -> None:
    schema = f"t_{uuid.uuid4().hex}"
    async with await psycopg.AsyncConnection.connect(pg_cluster.dsn(), autocommit=True) as conn:
        assert await migrate(conn, schema, "test", MIGRATIONS[:1]) == 1
    assert versions(pg_cluster, schema) == [1]
    store = PostgresStore(pg_cluster.dsn(), schema=schema)
    assert await store.list() == []
    await store.aclose()
    assert versions(pg_cluster, schema) == [m[0] for m in MIGRATIONS]
    with psycopg.connect(pg_cluster.dsn(), autocommit=True) as conn:
        found = conn.execute(
            "SELECT 1 FROM pg_indexes WHERE schemaname = %s AND indexname = %s", (schema, "threads_listing")
        )
        assert found.fetchone() == (1,)


async def test_a_store_works_on_a_second_event_loop(pg_factory: Factory) -> None:
    import asyncio

    store = pg_factory()
    lease = await store.acquire_lease("k", "a", 30)
    await store.finalize(lease, FinalizeRequest(status="first-loop"))

    def other_loop() -> str:
        record = asyncio.run(store.resolve("k"))
        return record.last_status if record else ""

    assert await asyncio.to_thread(other_loop) == "first-loop"
    await store.aclose()


def test_synchronous_commit_is_checked() -> None:
    with pytest.raises(ValueError, match="synchronous_commit must be 'on' or 'off'"):
        PostgresStore("postgresql://u@h/db", synchronous_commit="maybe")  # type: ignore[arg-type]


async def test_synchronous_commit_off_reaches_the_connections_and_survives_pickling(pg_factory: Factory) -> None:
    store = pickle.loads(pickle.dumps(pg_factory(synchronous_commit="off")))
    assert store.synchronous_commit == "off"
    pool = await store._ready()
    async with pool.connection() as conn:
        row = await (await conn.execute("SHOW synchronous_commit")).fetchone()
    assert row == ("off",)
    await store.aclose()


async def test_a_save_returns_only_once_it_is_on_the_servers_disk(pg_cluster: Cluster, pg_factory: Factory) -> None:
    # Lease changes commit without waiting for the disk; a save (with synchronous_commit "on") waits, and with it
    # everything logged before it. Right after each save, the server's log is flushed as far as it has been written.
    store = pg_factory()
    flushed = 0
    with psycopg.connect(pg_cluster.dsn(), autocommit=True) as admin:
        for i in range(20):
            lease = await store.acquire_lease("t", "me", 600)
            await store.finalize(lease, FinalizeRequest(status=f"run {i}"))
            row = admin.execute("SELECT pg_current_wal_flush_lsn() >= pg_current_wal_insert_lsn()").fetchone()
            flushed += bool(row and row[0])
            await store.release_lease(lease)
    await store.aclose()
    assert flushed >= 18  # (the server's own periodic log records may land in between once or twice)


# --- what a save writes ----------------------------------------------------------------------------------------


async def test_saves_that_grow_trim_and_replace_every_part_read_back_as_the_memory_store_has_them(
    pg_factory: Factory,
) -> None:
    from adaptor_nb.driver import Checkpoint
    from adaptor_nb.threadstore import HistoryEntry, MemoryStore

    pg, memory = pg_factory(), MemoryStore()
    lease_pg = await pg.acquire_lease("t", "me", 600)
    lease_mem = await memory.acquire_lease("t", "me", 600)
    base = time.time()
    for i in range(40):
        # History past its limit (trimmed from the front), archived checkpoints coming and going, receipts
        # re-delivered with a new time: every table's rows are added, replaced and removed.
        request = FinalizeRequest(
            checkpoint=Checkpoint(session_id=f"s{i}", driver="reference", fingerprint="fp", run_id=f"r{i}")
            if i % 7
            else None,
            archive_previous=i % 3 == 0,
            # 995 receipts at first: the ones after them push the oldest out (a thread keeps its newest 1,000).
            receipts={f"m{i}": base + i, f"m{i // 2}": base + i}
            | ({f"bulk{j}": base - 100 + j / 100 for j in range(995)} if i == 0 else {}),
            history=tuple(HistoryEntry("assistant", f"answer {i}.{j}", base + i) for j in range(i % 4)),
            status="ok" if i % 5 else "error",
            run_id=f"r{i}",
            usage={"input_tokens": i},
        )
        saved = await pg.finalize(lease_pg, request)
        expected = await memory.finalize(lease_mem, request)
        loaded = await pg.resolve("t")
        for got in (saved, loaded):
            assert got is not None
            assert (got.checkpoint, got.archived, got.history, got.receipts, got.runs, got.usage) == (
                expected.checkpoint,
                expected.archived,
                expected.history,
                expected.receipts,
                expected.runs,
                expected.usage,
            ), i


async def test_calls_after_the_server_ended_the_pools_connections_work(
    pg_cluster: Cluster, pg_factory: Factory
) -> None:
    store = pg_factory(pool_size=2)
    lease = await store.acquire_lease("t", "me", 600)
    await store.finalize(lease, FinalizeRequest(status="ok"))
    with psycopg.connect(pg_cluster.dsn(), autocommit=True) as admin:
        # What a server restart or an administrator does to every idle connection of the pool.
        ended = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = '' AND pid <> pg_backend_pid() AND datname = current_database() "
            "AND backend_type = 'client backend'"
        ).fetchone()
    assert ended is not None and ended[0] >= 2
    for _ in range(3):
        record = await store.resolve("t")
        assert record is not None and record.last_status == "ok"
    await store.aclose()
