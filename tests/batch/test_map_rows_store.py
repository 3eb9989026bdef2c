"""map_rows(..., thread_store=...): per-row Threads kept in the given store, the Agent passed in left as it is."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from adaptor_nb import Agent, ConfigError
from adaptor_nb.batch import map_rows
from adaptor_nb.drivers import reference
from adaptor_nb.threadstore import SQLiteStore


def _frame(n: int) -> pd.DataFrame:
    return pd.DataFrame({"id": range(n), "body": [f"row {i}" for i in range(n)]}, index=[f"r{i}" for i in range(n)])


async def test_per_row_threads_go_to_the_given_store_and_continue_there(tmp_path: Path) -> None:
    agent = Agent(reference.Driver(), model="m", workspace=str(tmp_path))
    store = SQLiteStore(tmp_path / "rows.sqlite")
    try:
        first = await map_rows(agent, _frame(3), "{body}", thread="row-{id}", thread_store=store, progress=False)
        again = await map_rows(agent, _frame(3), "more {body}", thread="row-{id}", thread_store=store, progress=False)
        assert (first["_status"] == "ok").all() and (again["_status"] == "ok").all()
        records = {r.key: r for r in await store.list()}
        assert sorted(records) == ["row-0", "row-1", "row-2"]
        assert {r.runs for r in records.values()} == {2}, "the second batch must continue each row's thread"
        assert await agent.store.list() == [], "the Agent passed in keeps its own store untouched"
        assert not agent.closed
    finally:
        await agent.close()
        store.close()


async def test_a_factory_runner_gets_the_store_too(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "rows.sqlite")
    try:
        out = await map_rows(
            lambda: Agent(reference.Driver(), model="m", workspace=str(tmp_path)),
            _frame(2),
            "{body}",
            thread="row-{id}",
            thread_store=store,
            progress=False,
        )
        assert (out["_status"] == "ok").all()
        assert sorted(r.key for r in await store.list()) == ["row-0", "row-1"]
    finally:
        store.close()


async def test_something_that_is_not_a_store_is_refused_naming_the_option(tmp_path: Path) -> None:
    agent = Agent(reference.Driver(), model="m", workspace=str(tmp_path))
    try:
        with pytest.raises(ConfigError) as caught:
            map_rows(agent, _frame(1), "{body}", thread_store="postgresql://db", progress=False)
        assert caught.value.option == "thread_store"
    finally:
        await agent.close()
