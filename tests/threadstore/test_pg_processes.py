"""Real OS processes on one Postgres server: concurrent schema creation, takeover after kill -9, a server restart."""

from __future__ import annotations

import asyncio
import shutil
import uuid
from collections.abc import Callable, Iterator

import psycopg
import pytest

from adaptor_nb._errors import ThreadBusyError, ThreadLeaseLostError
from adaptor_nb.driver import Checkpoint
from adaptor_nb.threadstore import FinalizeRequest, Lease, PostgresStore, ThreadStoreError
from adaptor_nb.threadstore._pg_schema import MIGRATIONS

from .conftest import HERE, Worker
from .pg_cluster import Cluster

Start = Callable[..., Worker]
PG_WORKER = HERE / "pg_worker.py"
# Runs a worker in a process-id namespace of its own: to the lease logic it is a kernel on another host, whose
# death this machine cannot see, so only the lease's expiry on the database clock frees its thread.
OTHER_HOST = ("unshare", "--pid", "--fork", "--mount-proc", "--kill-child")
DEADLINE = 60.0


async def acquire_when_free(store: PostgresStore, key: str, owner: str) -> tuple[Lease, int]:
    """Poll for the lease until it expires and is taken; returns it and how many attempts found it busy."""
    busy = 0
    loop = asyncio.get_running_loop()
    give_up = loop.time() + DEADLINE
    while True:
        try:
            return await store.acquire_lease(key, owner, 30), busy
        except ThreadBusyError:
            busy += 1
            assert loop.time() < give_up, f"the lease on {key!r} never expired"
            await asyncio.sleep(0.1)  # waiting for expiry is what is under test


def test_four_processes_create_one_schema_at_once(pg_cluster: Cluster, workers: Start) -> None:
    schema = f"t_{uuid.uuid4().hex}"
    procs = [workers("migrate", pg_cluster.dsn(), schema, script=PG_WORKER) for _ in range(4)]
    for p in procs:
        assert p.read()["event"] == "ready"
    for p in procs:
        p.send("go")
    for p in procs:
        assert p.read()["event"] == "done"
        p.finish()
    with psycopg.connect(pg_cluster.dsn(), autocommit=True) as conn:
        rows = conn.execute(f'SELECT version FROM "{schema}".schema_migrations ORDER BY version').fetchall()
    assert [r[0] for r in rows] == [m[0] for m in MIGRATIONS]


@pytest.mark.skipif(shutil.which("unshare") is None, reason="util-linux unshare is needed to stand for another host")
async def test_a_kernel_on_another_host_killed_loses_its_lease_at_expiry(
    pg_cluster: Cluster, pg_factory: Callable[..., PostgresStore], workers: Start
) -> None:
    store = pg_factory()
    holder = workers(
        "hold", pg_cluster.dsn(), store.schema, "review", "kernel-a", "3", script=PG_WORKER, prefix=OTHER_HOST
    )
    held = holder.read_until("held")
    holder.kill9()
    with pytest.raises(ThreadBusyError, match="kernel-a"):
        await store.acquire_lease("review", "kernel-b", 30)  # its death is invisible from here: the lease stands
    lease, _ = await acquire_when_free(store, "review", "kernel-b")
    assert lease.took_over == ""  # freed by expiry, not by seeing the holder gone
    record = await store.resolve("review")
    assert record is not None and record.checkpoint is not None
    assert record.checkpoint.session_id == "session-of-kernel-a"  # the last healthy checkpoint carries on
    dead = Lease("review", "kernel-a", held["token"], held["expires_at"])
    with pytest.raises(ThreadLeaseLostError):
        await store.finalize(dead, FinalizeRequest(status="from-the-dead"))
    saved = await store.finalize(lease, FinalizeRequest(status="kernel-b"))
    assert saved.last_status == "kernel-b" and saved.checkpoint == record.checkpoint
    await store.aclose()


async def test_a_kernel_on_this_host_killed_is_taken_over_at_once(
    pg_cluster: Cluster, pg_factory: Callable[..., PostgresStore], workers: Start
) -> None:
    store = pg_factory()
    holder = workers("hold", pg_cluster.dsn(), store.schema, "review", "kernel-a", "600", script=PG_WORKER)
    holder.read_until("held")
    pid = holder.pid
    holder.kill9()
    lease = await store.acquire_lease("review", "kernel-b", 30)  # a 600 s lease, taken at once
    assert "kernel-a" in lease.took_over and str(pid) in lease.took_over
    record = await store.resolve("review")
    assert record is not None and record.checkpoint is not None
    assert record.checkpoint.session_id == "session-of-kernel-a"
    await store.aclose()


@pytest.fixture
def own_cluster() -> Iterator[Cluster]:
    """A server of this test's own, which it may stop and start."""
    cluster = Cluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.remove()


@pytest.mark.timeout(180)
async def test_server_stopped_mid_run_then_back(own_cluster: Cluster) -> None:
    store = PostgresStore(own_cluster.dsn(), connect_timeout=2)
    healthy = Checkpoint(session_id="healthy", driver="reference", fingerprint="fp", run_id="r1")
    lease = await store.acquire_lease("k", "kernel", 60)
    await store.finalize(lease, FinalizeRequest(checkpoint=healthy, status="ok"))
    lease = await store.acquire_lease("k", "kernel", 60)  # the next run starts ...
    own_cluster.stop()  # ... and the server goes away under it
    later = Checkpoint(session_id="later", driver="reference", fingerprint="fp", run_id="r2")
    with pytest.raises(
        ThreadStoreError, match=r"thread store Postgres\(.*\) at postgresql://.*saving a thread"
    ) as info:
        await store.finalize(lease, FinalizeRequest(checkpoint=later, status="ok"))
    assert info.value.details["dsn"] == store.dsn
    own_cluster.start()
    record = await store.resolve("k")  # the same store object reconnects
    assert record is not None and record.checkpoint == healthy  # nothing healthy was lost
    lease = await store.acquire_lease("k", "kernel", 60)
    saved = await store.finalize(lease, FinalizeRequest(checkpoint=later, status="ok"))
    assert saved.checkpoint == later
    await store.aclose()
