"""Runs one map_rows batch with a cache, as a notebook kernel would, for the re-run-after-a-crash test.

``rerun_worker.py CACHE LOG STORE [STALL]``: six rows ``row 0`` .. ``row 5``, one at a time, each on its own Thread
(``row-0`` ..) kept in the SQLite thread store file STORE (``-``: no threads). Each run appends its prompt to LOG
when it starts. With STALL (a prompt), the run of that prompt prints ``stalled`` and waits for ever, so the
test can kill this process in the middle of the batch; without it, the batch finishes and prints each row's status
and each thread's number of runs as one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pandas as pd

from adaptor_nb import Agent
from adaptor_nb.batch import map_rows
from adaptor_nb.drivers import reference
from adaptor_nb.threadstore import SQLiteStore


def _append(path: str, line: str) -> None:
    with open(path, "a") as out:
        out.write(line + "\n")


class LoggedDriver(reference.Driver):
    """The reference driver, logging each run's prompt, and never finishing the run of ``stall``."""

    def __init__(self, log: str, stall: str | None) -> None:
        super().__init__()
        self.log = log
        self.stall = stall

    async def run(self, invocation: Any, ctx: Any) -> Any:
        _append(self.log, invocation.prompt)
        if invocation.prompt == self.stall:
            print("stalled", flush=True)
            await asyncio.Event().wait()
        return await super().run(invocation, ctx)


async def main(cache: str, log: str, store_path: str, stall: str | None) -> None:
    df = pd.DataFrame({"id": range(6), "body": [f"row {i}" for i in range(6)]}, index=[f"r{i}" for i in range(6)])
    agent = Agent(LoggedDriver(log, stall), model="m")
    store = SQLiteStore(store_path) if store_path != "-" else None
    threads = {"thread": "row-{id}", "thread_store": store} if store is not None else {}
    out = await map_rows(agent, df, "{body}", concurrency=1, cache=cache, progress=False, **threads)
    runs = {r.key: r.runs for r in await store.list()} if store is not None else {}
    print(json.dumps({"status": dict(out["_status"]), "text": dict(out["text"]), "runs": runs}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None))
