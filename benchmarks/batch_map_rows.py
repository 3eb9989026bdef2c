"""map_rows overhead: 1,000 rows on the reference driver with a fixed per-run delay, beside a bare
``asyncio.gather`` with a semaphore over the same runs in the same process; then the Dask executor on a 2-worker
LocalCluster beside the in-kernel executor.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/batch_map_rows.py [--rows 1000] [--delay 0.002] [--no-dask]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import tracemalloc
from typing import Any

import pandas as pd
from pydantic import BaseModel

from adaptor_nb import Agent
from adaptor_nb.batch import DaskExecutor, map_rows
from adaptor_nb.drivers import reference

DELAY = 0.002


class Label(BaseModel):
    label: str
    score: int


def delayed_agent() -> Agent:
    """Every run waits DELAY seconds, then answers a fixed structured value (module level: picklable)."""
    value = {"label": "ok", "score": 1}
    turn = reference.Turn(
        reference.Delay(DELAY), reference.Text('{"label": "ok", "score": 1}'), reference.Structured(value)
    )
    return Agent(reference.Driver(scenario=reference.scenario(turn)))


def frame(rows: int) -> pd.DataFrame:
    return pd.DataFrame({"id": range(rows), "body": [f"ticket body {i}" for i in range(rows)]})


async def bare(agent: Agent, df: pd.DataFrame, concurrency: int) -> float:
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int, body: str) -> Label:
        async with sem:
            result = await agent.send(f"Classify {i}: {body}", schema=Label)
            return result.decode(Label)

    t = time.perf_counter()
    await asyncio.gather(*(one(i, b) for i, b in zip(df["id"], df["body"], strict=True)))
    return time.perf_counter() - t


async def batched(
    agent: Agent | None, df: pd.DataFrame, concurrency: int, executor: Any = None, runner: Any = None
) -> float:
    t = time.perf_counter()
    out = await map_rows(
        runner or agent, df, "Classify {id}: {body}", Label, concurrency=concurrency, progress=False, executor=executor
    )
    elapsed = time.perf_counter() - t
    assert (out["_status"] == "ok").all(), out["_error"].iloc[0]
    return elapsed


async def main(rows: int, rounds: int) -> None:
    df = frame(rows)
    agent = delayed_agent()
    print(f"{rows} rows, per-run delay {DELAY * 1000:.1f} ms, median of {rounds} rounds")
    print("| concurrency | map_rows | bare gather+semaphore | ratio | wall added per row |")
    print("|---|---|---|---|---|")
    await bare(agent, df.head(64), 8)  # warm-up: first imports and allocations count for neither side
    await batched(agent, df.head(64), 8)
    for conc in (1, 8, 64):
        ours, base = [], []
        for _ in range(rounds):
            base.append(await bare(agent, df, conc))
            ours.append(await batched(agent, df, conc))
        m, b = statistics.median(ours), statistics.median(base)
        per_row_us = (m - b) / rows * 1e6
        print(f"| {conc} | {m:.3f} s | {b:.3f} s | {m / b:.3f}x | {per_row_us:+.0f} µs |")
    tracemalloc.start()
    await batched(agent, df, 64)
    _, peak_ours = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    await bare(agent, df, 64)
    _, peak_bare = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"peak traced memory at concurrency 64: map_rows {peak_ours / rows / 1024:.1f} KiB/row, "
        f"bare {peak_bare / rows / 1024:.1f} KiB/row, difference {(peak_ours - peak_bare) / rows / 1024:+.1f} KiB/row"
    )
    await agent.close()


async def dask_vs_kernel(client: Any, rows: int) -> tuple[float, float]:
    small = frame(rows)
    await batched(None, small.head(8), 8, executor=DaskExecutor(client), runner=delayed_agent)  # warm the workers
    remote = await batched(None, small, 64, executor=DaskExecutor(client), runner=delayed_agent)
    local = await batched(None, small, 64, runner=delayed_agent)
    return remote, local


def run_dask(rows: int) -> None:
    from distributed import Client, LocalCluster

    t = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40)
    client = Client(cluster)
    started = time.perf_counter() - t
    try:
        remote, local = asyncio.run(dask_vs_kernel(client, rows))
    finally:
        client.close()
        cluster.close()
    print(
        f"Dask: 2-worker LocalCluster started in {started:.2f} s; {rows} rows at concurrency 64: DaskExecutor "
        f"{remote:.3f} s ({remote / rows * 1e3:.2f} ms/row), in-kernel {local:.3f} s ({local / rows * 1e3:.2f} ms/row)"
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--delay", type=float, default=DELAY)
    ap.add_argument("--no-dask", action="store_true")
    a = ap.parse_args()
    DELAY = a.delay
    asyncio.run(main(a.rows, a.rounds))
    if not a.no_dask:
        run_dask(min(a.rows, 400))
