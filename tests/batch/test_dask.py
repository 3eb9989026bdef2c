"""The Dask executor on a real LocalCluster of two worker processes, including a worker killed mid-batch."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from adaptor_nb import Agent, ConfigError
from adaptor_nb.batch import DaskExecutor, map_rows

from ._rows import RowDriver, Ticket, row_agent

distributed = pytest.importorskip("distributed")


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


def _frame(n: int, body: str = "row") -> pd.DataFrame:
    return pd.DataFrame({"id": range(n), "body": [f"{body} {i}" for i in range(n)]}, index=[f"r{i}" for i in range(n)])


def _worker_pid() -> int:
    return os.getpid()


async def test_rows_run_on_the_workers_and_come_back_in_the_same_shape(client: Any) -> None:
    df = _frame(12)
    remote = await map_rows(row_agent, df, "{body}", Ticket, executor=DaskExecutor(client), progress=False)
    local = await map_rows(row_agent, df, "{body}", Ticket, progress=False)
    assert list(remote.columns) == list(local.columns)
    assert list(remote.dtypes) == list(local.dtypes)
    assert list(remote.index) == list(df.index)
    assert (remote["_status"] == "ok").all()
    pd.testing.assert_frame_equal(remote[["label", "priority", "urgent"]], local[["label", "priority", "urgent"]])


async def test_failures_stay_per_row_on_the_workers(client: Any) -> None:
    df = pd.DataFrame({"body": ["fine", "[fail:remote broke]"]})
    out = await map_rows(row_agent, df, "{body}", Ticket, executor=DaskExecutor(client), progress=False)
    assert list(out["_status"]) == ["ok", "failed"]
    assert "remote broke" in out["_error"].iloc[1]


def test_an_agent_instance_is_refused_for_remote_execution_before_any_run(client: Any) -> None:
    driver = RowDriver()
    with pytest.raises(ConfigError, match="factory") as info:
        map_rows(Agent(driver), _frame(1), "{body}", Ticket, executor=DaskExecutor(client))
    assert info.value.option == "runner" and not driver.attempts


async def test_a_worker_killed_mid_batch_yields_one_result_per_row(client: Any) -> None:
    df = _frame(16, "[delay:0.05] row")
    batch = map_rows(row_agent, df, "{body}", Ticket, concurrency=4, executor=DaskExecutor(client), progress=False)
    killed: list[int] = []

    def kill_one(p: Any) -> None:
        if p.done >= 4 and not killed:
            pids = client.run(_worker_pid)
            _address, pid = sorted(pids.items())[0]
            killed.append(pid)
            os.kill(pid, 9)

    batch.progress.listeners.append(kill_one)
    out = await batch
    assert killed
    assert len(out) == 16 and (out["_status"] == "ok").all()
    assert list(out.index) == list(df.index)
