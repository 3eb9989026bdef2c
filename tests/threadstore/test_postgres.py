"""The Postgres store on a real server: loading, connection strings, bad input, schema creation and migrations."""

from __future__ import annotations

import pickle
import socket
import subprocess
import sys
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
