"""Agent runs on the Postgres store: bad input fails before the driver starts; a server lost mid-run loses nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from adaptor_nb import Agent, Notice, Result, RunError, Stream
from adaptor_nb.drivers import reference
from adaptor_nb.threadstore import PostgresStore, ThreadStoreError

from .pg_cluster import PASSWORD, Cluster


async def run(stream: Stream, notices: list[Notice] | None = None) -> tuple[Result, list[Notice]]:
    """The run's result and its thread.persistence notices (also put in ``notices``, for a run that fails)."""
    notices = [] if notices is None else notices
    notices += [ev async for ev in stream.events() if isinstance(ev, Notice) and ev.kind == "thread.persistence"]
    return await stream.result(), notices


def gated() -> tuple[reference.Gate, reference.Driver]:
    gate = reference.Gate()
    return gate, reference.Driver(scenario=reference.Scenario(reference.Turn("working", gate, " done")))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fault", ["wrong password", "missing database"])
async def test_a_bad_store_fails_the_send_before_the_driver_starts(
    pg_cluster: Cluster, tmp_path: Path, fault: str
) -> None:
    dsn = pg_cluster.dsn(password="Not-The-Pass-3") if fault == "wrong password" else pg_cluster.dsn(dbname="gone")
    gate, driver = gated()
    store = PostgresStore(dsn, connect_timeout=2)
    agent = Agent(driver, model="m", workspace=str(tmp_path), thread_store=store)
    try:
        with pytest.raises(ThreadStoreError, match=r"thread store Postgres\(") as info:
            await agent.thread("review").send("hello").result()
        assert not gate.reached.is_set(), "the driver ran although the store could not be used"
        assert "Not-The-Pass-3" not in str(info.value) and PASSWORD not in str(info.value)
    finally:
        await agent.close()
        await store.aclose()


@pytest.fixture
def own_cluster() -> Iterator[Cluster]:
    cluster = Cluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.remove()


@pytest.mark.timeout(180)
async def test_server_lost_mid_run_keeps_every_checkpoint_and_the_next_send_works(
    own_cluster: Cluster, tmp_path: Path
) -> None:
    store = PostgresStore(own_cluster.dsn(), connect_timeout=2)
    first_agent = Agent(reference.Driver(), model="m", workspace=str(tmp_path), thread_store=store)
    first = await first_agent.thread("review").send("hello").result()
    await first_agent.close()
    gate, driver = gated()
    agent = Agent(driver, model="m", workspace=str(tmp_path), thread_store=store)
    try:
        thread = agent.thread("review")
        stream = thread.send("second")
        notes: list[Notice] = []
        events = asyncio.ensure_future(run(stream, notes))
        await gate.reached.wait()
        own_cluster.stop()  # the server goes away while the run is under way
        gate.open()
        with pytest.raises(RunError) as failed:  # the run ends with an error naming the store, the answer in it
            await events
        assert "thread store Postgres(" in str(failed.value) and PASSWORD not in str(failed.value)
        assert failed.value.details["retained_in_process"] is True and failed.value.details["store"].startswith(
            "Postgres("
        )
        second = failed.value.result
        assert second is not None and second.text == "working done"
        notices = notes
        final = notices[-1].data
        assert final["final"] is True and final["retained_in_process"] is True
        assert "thread store Postgres(" in final["error"] and PASSWORD not in final["error"]
        kept = await thread.checkpoint()
        assert kept is not None and kept.run_id == second.run_id  # the newest checkpoint waits in the process

        with pytest.raises(ThreadStoreError, match="cannot be reached"):  # while the server is down
            await thread.send("while down").result()

        own_cluster.start()
        third, notices = await run(thread.send("third"))
        assert notices == []
        record = await store.resolve("review")
        assert record is not None and record.checkpoint is not None
        assert record.checkpoint.run_id == third.run_id and record.runs == 3
        texts = [h.text for h in record.history]
        assert first.text in texts and second.text in texts  # nothing of the run the server missed is lost
    finally:
        await agent.close()
        await store.aclose()
