"""map_rows semantics on the row-scripting reference driver: statuses, accounting, retries, limits, cache, cancel."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd
import pytest
from pydantic import BaseModel

import adaptor_nb
from adaptor_nb import Agent, ConfigError
from adaptor_nb.batch import BatchFailed, map_rows

from ._rows import RowDriver, Ticket


def _frame(prompts: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"id": range(len(prompts)), "body": prompts}, index=[f"t{i}" for i in range(len(prompts))])


async def test_each_row_becomes_typed_columns_and_accounting() -> None:
    df = _frame(["[reply:{'label': 'bug', 'priority': 2, 'urgent': true}]", "[fail:no luck]"])
    agent = Agent(RowDriver())
    out = await map_rows(agent, df, "Classify #{id}: {body}", Ticket, progress=False)
    assert list(out.index) == ["t0", "t1"]
    assert out.loc["t0", "label"] == "bug" and out.loc["t0", "priority"] == 2 and bool(out.loc["t0", "urgent"])
    assert str(out["priority"].dtype) == "Int64" and str(out["urgent"].dtype) == "boolean"
    assert str(out["label"].dtype) == "string"
    assert list(out["_status"]) == ["ok", "failed"]
    assert "no luck" in out.loc["t1", "_error"]
    assert out.loc["t0", "_input_tokens"] > 0 and out.loc["t0", "_turns"] == 1 and out.loc["t0", "_run_id"]
    assert pd.isna(out.loc["t1", "label"])
    assert {"_cost_usd", "_output_tokens", "_attempts", "_duration_s"} <= set(out.columns)
    await agent.close()


async def test_the_prompt_template_renders_each_rows_columns() -> None:
    driver = RowDriver()
    await map_rows(Agent(driver), _frame(["a", "b"]), "Ticket {id}: {body} {{literal}}", Ticket, progress=False)
    assert set(driver.attempts) == {"Ticket 0: a {literal}", "Ticket 1: b {literal}"}


async def test_a_factory_runner_is_built_and_closed_by_the_batch() -> None:
    made: list[Agent] = []

    def factory() -> Agent:
        made.append(Agent(RowDriver()))
        return made[-1]

    out = await map_rows(factory, _frame(["x"]), "{body}", Ticket, progress=False)
    assert list(out["_status"]) == ["ok"]
    assert len(made) == 1 and made[0].closed


async def test_transient_failures_are_retried_and_permanent_ones_are_not() -> None:
    driver = RowDriver()
    df = _frame(["[transient:1] one", "[transient:5] many", "[fail:bad input] never"])
    out = await map_rows(Agent(driver), df, "{body}", Ticket, retries=2, backoff=0, progress=False)
    assert list(out["_status"]) == ["ok", "failed", "failed"]
    assert list(out["_attempts"]) == [2, 3, 1]
    assert driver.attempts["[fail:bad input] never"] == 1


async def test_output_that_fails_the_schema_is_failed_with_the_validation_message() -> None:
    out = await map_rows(Agent(RowDriver()), _frame(["[bad]"]), "{body}", Ticket, progress=False)
    assert out.loc["t0", "_status"] == "failed"
    assert "label" in out.loc["t0", "_error"]


async def test_the_concurrency_limit_holds() -> None:
    driver = RowDriver(delay=0.001)
    out = await map_rows(Agent(driver), _frame(["x"] * 24), "{body} {id}", Ticket, concurrency=3, progress=False)
    assert (out["_status"] == "ok").all()
    assert driver.peak == 3


async def test_the_cost_limit_stops_admission_and_skips_the_rest_with_the_reason() -> None:
    df = _frame([f"[cost:400] row {i}" for i in range(10)])
    out = await map_rows(Agent(RowDriver()), df, "{body}", Ticket, concurrency=1, max_cost_usd=1.0, progress=False)
    assert list(out["_status"]) == ["ok"] * 3 + ["skipped"] * 7
    assert "cost limit" in out.loc["t9", "_error"]
    assert out["_cost_usd"].sum() == pytest.approx(1.2)


async def test_on_error_raise_fails_the_batch_with_the_partial_frame() -> None:
    df = _frame(["ok", "[fail:broken]", "[gate] never admitted"])
    with pytest.raises(BatchFailed, match="broken") as info:
        await map_rows(Agent(RowDriver()), df, "{body}", Ticket, concurrency=1, on_error="raise", progress=False)
    assert list(info.value.frame["_status"]) == ["ok", "failed", "skipped"]


async def test_cancel_stops_admission_cancels_live_runs_and_returns_the_partial_frame() -> None:
    driver = RowDriver()
    df = _frame(["done first"] + ["[gate] held"] * 2 + ["queued"] * 5)
    agent = Agent(driver)
    batch = map_rows(agent, df, "{body} {id}", Ticket, concurrency=3, progress=False)
    ready = asyncio.Event()

    def check(*_: object) -> None:
        if driver.waiting >= 2 and batch.progress.done >= 1:
            ready.set()

    driver.on_wait.append(check)
    batch.progress.listeners.append(check)
    await ready.wait()
    batch.cancel()
    out = await batch
    assert out.loc["t0", "_status"] == "ok"
    assert (out["_status"].iloc[1:] == "skipped").all()
    assert (out["_error"].iloc[1:] == "cancelled (cancelled)").all()
    assert driver.live == 0 and agent.active == []


async def test_cache_hits_cost_nothing_and_a_changed_prompt_or_schema_misses(tmp_path: Path) -> None:
    db = tmp_path / "cache.sqlite"
    df = _frame(["[cost:100] a", "[cost:100] b"])
    driver = RowDriver()
    first = await map_rows(Agent(driver), df, "{body}", Ticket, cache=db, progress=False)
    again = await map_rows(Agent(driver), df, "{body}", Ticket, cache=db, progress=False)
    assert list(first["_status"]) == ["ok", "ok"] and list(again["_status"]) == ["cached", "cached"]
    assert sum(driver.attempts.values()) == 2
    pd.testing.assert_frame_equal(first[["label", "priority", "urgent"]], again[["label", "priority", "urgent"]])

    class Other(BaseModel):
        label: str

    await map_rows(Agent(driver), df, "{body}", Other, cache=db, progress=False)
    await map_rows(Agent(driver), df, "Now: {body}", Ticket, cache=db, progress=False)
    await map_rows(Agent(driver), df, "{body}", Ticket, cache=False, progress=False)
    assert sum(driver.attempts.values()) == 8


async def test_failed_rows_are_not_cached(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    driver = RowDriver()
    await map_rows(Agent(driver), _frame(["[fail:x]"]), "{body}", Ticket, cache=db, progress=False)
    out = await map_rows(Agent(driver), _frame(["[fail:x]"]), "{body}", Ticket, cache=db, progress=False)
    assert out.loc["t0", "_status"] == "failed" and driver.attempts["[fail:x]"] == 2


async def test_a_thread_template_gives_each_row_a_named_thread_later_cells_continue() -> None:
    agent = Agent(RowDriver())
    await map_rows(agent, _frame(["a", "b"]), "{body}", Ticket, thread="ticket-{id}", progress=False)
    follow = await agent.thread("ticket-1").send("and then?")
    assert "1 earlier prompt" in follow.text


@pytest.mark.parametrize(
    ("kwargs", "option"),
    [
        ({"concurrency": 0}, "concurrency"),
        ({"retries": -1}, "retries"),
        ({"timeout": -2}, "timeout"),
        ({"max_cost_usd": "a lot"}, "max_cost_usd"),
        ({"on_error": "ignore"}, "on_error"),
    ],
)
def test_invalid_options_fail_before_any_run_naming_the_option(kwargs: dict[str, object], option: str) -> None:
    driver = RowDriver()
    with pytest.raises(ConfigError) as info:
        map_rows(Agent(driver), _frame(["x"]), "{body}", Ticket, **kwargs)  # type: ignore[arg-type]
    assert info.value.option == option
    assert not driver.attempts


def test_a_schema_that_is_not_a_model_and_a_non_frame_are_refused() -> None:
    with pytest.raises(ConfigError, match="schema"):
        map_rows(Agent(RowDriver()), _frame(["x"]), "{body}", dict)
    with pytest.raises(ConfigError, match="DataFrame"):
        map_rows(Agent(RowDriver()), [{"body": "x"}], "{body}", Ticket)  # type: ignore[arg-type]


def test_map_rows_sync_runs_in_a_plain_script() -> None:
    out = adaptor_nb.map_rows_sync(lambda: Agent(RowDriver()), _frame(["x", "y"]), "{body}", Ticket, progress=False)
    assert list(out["_status"]) == ["ok", "ok"]


def test_importing_adaptor_nb_and_its_batch_package_loads_neither_pandas_nor_dask() -> None:
    import subprocess
    import sys

    code = "import sys, adaptor_nb, adaptor_nb.batch; print([m for m in ('pandas', 'dask') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_cancelling_the_awaiting_task_like_an_interrupt_keeps_the_partial_frame() -> None:
    driver = RowDriver()
    df = _frame(["[gate] held"] * 2 + ["queued"] * 3)
    agent = Agent(driver)
    batch = map_rows(agent, df, "{body} {id}", Ticket, concurrency=2, progress=False)
    ready = asyncio.Event()
    driver.on_wait.append(lambda: ready.set() if driver.waiting >= 2 else None)
    cell = asyncio.ensure_future(batch._result())
    await ready.wait()
    cell.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cell
    assert batch.frame is not None and (batch.frame["_status"] == "skipped").all()
    assert (batch.frame["_error"] == "cancelled (interrupted)").all()
    assert driver.live == 0 and agent.active == []


async def test_headless_approvals_apply_the_fallback_at_once_except_for_approved_tools() -> None:
    df = _frame(["[tool:Bash] list files", "[tool:Write] write one"])
    out = await map_rows(Agent(RowDriver()), df, "{body}", Ticket, approve_tools={"Bash"}, progress=False)
    assert out.loc["t0", "_status"] == "ok"
    assert out.loc["t1", "_status"] == "failed" and "no approver in a headless batch" in out.loc["t1", "_error"]
