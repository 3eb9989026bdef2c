"""map_rows on a real Dask LocalCluster over a Postgres store, with a worker process killed in the middle of a row."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from adaptor_nb.batch import DaskExecutor, map_rows
from adaptor_nb.threadstore import PostgresStore

from .pg_stall import StallingAgents

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.slow

ROWS = 6
STALLED = 3


@pytest.fixture
def client() -> Iterator[Any]:
    """A cluster of its own: the test kills one of its workers."""
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50
    )
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


def _read_line(path: Path) -> str:
    with path.open() as pipe:
        return pipe.readline().strip()


@pytest.mark.timeout(300)
async def test_a_worker_killed_mid_row_leaves_every_row_done_and_threads_continued(
    client: Any, pg_factory: Callable[..., PostgresStore], tmp_path: Path
) -> None:
    store = pg_factory()
    fifo = tmp_path / "stalled"
    os.mkfifo(fifo)
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    factory = StallingAgents(str(tmp_path), str(fifo), str(tmp_path / "stalled-once"), str(sessions))
    df = pd.DataFrame(
        {
            "id": range(ROWS),
            "body": [f"row {i}" for i in range(ROWS)],
            "extra": ["[stall]" if i == STALLED else "" for i in range(ROWS)],
        },
        index=[f"r{i}" for i in range(ROWS)],
    )
    first = await map_rows(
        factory, df, "{body}", thread="row-{id}", thread_store=store, executor=DaskExecutor(client), progress=False
    )
    assert (first["_status"] == "ok").all()
    before = {r.key: r for r in await store.list()}
    assert {r.runs for r in before.values()} == {1} and all(r.checkpoint is not None for r in before.values())

    batch = asyncio.ensure_future(
        map_rows(
            factory,
            df,
            "again {body} {extra}",
            thread="row-{id}",
            thread_store=store,
            executor=DaskExecutor(client),
            progress=False,
        )
    )
    address = await asyncio.to_thread(_read_line, fifo)  # the stalled row's worker, in the middle of its run
    assert address in client.scheduler_info()["workers"]
    pid = client.run(os.getpid, workers=[address])[address]
    os.kill(pid, signal.SIGKILL)
    second = await batch

    assert len(second) == ROWS and (second["_status"] == "ok").all(), second[["_status", "_error"]]
    assert list(second.index) == list(df.index)
    records = {r.key: r for r in await store.list()}
    assert sorted(records) == sorted(f"row-{i}" for i in range(ROWS))
    assert {r.runs for r in records.values()} == {2}, "each row's second run continues its thread, the killed one too"
    stalled = records[f"row-{STALLED}"]
    assert stalled.checkpoint is not None and stalled.checkpoint != before[f"row-{STALLED}"].checkpoint
    # The retry resumed the session the last checkpoint names: one earlier prompt (the first round's), not a new
    # conversation and not the killed run's.
    assert "This conversation has 1 earlier prompt." in str(second.loc[f"r{STALLED}", "text"])
    await store.aclose()
