"""map_rows on a real Dask LocalCluster with per-row Threads whose workers all resolve one Postgres store."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from adaptor_nb.batch import DaskExecutor, map_rows
from adaptor_nb.threadstore import PostgresStore

from .pg_rows import PostgresAgents, ReferenceAgents

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
    )
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


@pytest.mark.timeout(300)
async def test_per_row_threads_continue_on_whichever_worker_runs_them(
    client: Any, pg_factory: Callable[..., PostgresStore], tmp_path: Path
) -> None:
    store = pg_factory()
    factory = PostgresAgents(store, str(tmp_path))
    df = pd.DataFrame({"id": range(8), "body": [f"row {i}" for i in range(8)]}, index=[f"r{i}" for i in range(8)])
    first = await map_rows(factory, df, "{body}", thread="row-{id}", executor=DaskExecutor(client), progress=False)
    assert (first["_status"] == "ok").all()
    again = await map_rows(
        factory, df, "again {body}", thread="row-{id}", executor=DaskExecutor(client), progress=False
    )
    assert (again["_status"] == "ok").all()
    records = {r.key: r for r in await store.list()}
    assert sorted(records) == sorted(f"row-{i}" for i in range(8))
    assert {r.runs for r in records.values()} == {2}, "each row's second run must continue its thread from the store"
    assert all(r.checkpoint is not None for r in records.values())
    await store.aclose()


@pytest.mark.timeout(300)
async def test_thread_store_given_to_map_rows_reaches_every_worker(
    client: Any, pg_factory: Callable[..., PostgresStore], tmp_path: Path
) -> None:
    store = pg_factory()
    factory = ReferenceAgents(str(tmp_path))  # its Agents have no store of their own
    df = pd.DataFrame({"id": range(6), "body": [f"row {i}" for i in range(6)]}, index=[f"r{i}" for i in range(6)])
    for prompt in ("{body}", "again {body}"):
        out = await map_rows(
            factory, df, prompt, thread="row-{id}", thread_store=store, executor=DaskExecutor(client), progress=False
        )
        assert (out["_status"] == "ok").all()
    records = {r.key: r for r in await store.list()}
    assert sorted(records) == sorted(f"row-{i}" for i in range(6))
    assert {r.runs for r in records.values()} == {2}, "each row's second run must continue its thread from the store"
    await store.aclose()
