"""A separate OS process that uses one SQLite thread store file; the process tests drive it over stdin/stdout.

Usage: python store_worker.py MODE DB KEY OWNER [ARGS...]; every report is one JSON line on stdout.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from adaptor_nb._errors import ThreadBusyError, ThreadLeaseLostError
from adaptor_nb.driver import Checkpoint
from adaptor_nb.threadstore import FinalizeRequest, HistoryEntry, SQLiteStore


def report(**fields: Any) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def wait_for_parent() -> str:
    """Block until the parent writes a line (or closes stdin)."""
    return sys.stdin.readline().strip()


async def contend(store: SQLiteStore, key: str, owner: str, attempts: int, ttl: float) -> None:
    """Try the lease ``attempts`` times; while holding it, write and renew, recording the ownership interval."""
    report(event="ready")
    wait_for_parent()
    wins = busy = 0
    for i in range(attempts):
        try:
            lease = await store.acquire_lease(key, owner, ttl)
        except ThreadBusyError:
            busy += 1
            continue
        start = time.monotonic_ns()
        request = FinalizeRequest(status=owner, run_id=f"{owner}-{i}", receipts={f"{owner}-{i}": time.time()})
        await store.finalize(lease, request)
        end = time.monotonic_ns()
        wins += 1
        try:
            # The renewal validates the lease again, so the whole [start, end] interval was exclusive.
            await store.renew_lease(lease, ttl)
        except ThreadLeaseLostError:
            report(event="lost", owner=owner)  # descheduled past the ttl: the interval proves nothing
            continue
        await store.release_lease(lease)
        report(event="held", owner=owner, start=start, end=end)
    report(event="done", owner=owner, wins=wins, busy=busy)


async def hold(store: SQLiteStore, key: str, owner: str, ttl: float) -> None:
    """Take the lease, save a checkpoint, report the lease and then block until killed."""
    lease = await store.acquire_lease(key, owner, ttl)
    cp = Checkpoint(session_id=f"session-of-{owner}", driver="reference", fingerprint="fp", run_id="r1")
    await store.finalize(lease, FinalizeRequest(driver="reference", fingerprint="fp", checkpoint=cp, status="ok"))
    report(event="holding", token=lease.token, expires_at=lease.expires_at)
    wait_for_parent()


def _request(n: int) -> FinalizeRequest:
    """The n-th write of the finalize loop: every field says which write it came from."""
    now = time.time()
    return FinalizeRequest(
        driver="reference",
        fingerprint=f"fp-{n}",
        checkpoint=Checkpoint(session_id=f"s{n}", driver="reference", fingerprint=f"fp-{n}", run_id=f"r{n}"),
        archive_previous=True,
        receipts={f"m{n}-{j}": now for j in range(50)},
        history=(HistoryEntry("assistant", f"answer {n} " + "x" * 2000, now),),
        status="ok",
        run_id=f"r{n}",
        usage={"input_tokens": 1},
    )


async def finalize_loop(store: SQLiteStore, key: str, owner: str) -> None:
    """Finalize write after write, reporting each commit, until killed."""
    lease = await store.acquire_lease(key, owner, 3600)
    report(event="leased", token=lease.token, expires_at=lease.expires_at)
    n = 0
    while True:
        n += 1
        report(event="begin", n=n)
        await store.finalize(lease, _request(n))
        report(event="committed", n=n)


async def block_in_commit(store: SQLiteStore, key: str, owner: str) -> None:
    """Commit one write, then stop inside the second finalize at its last statement and wait to be killed."""
    lease = await store.acquire_lease(key, owner, 3600)
    report(event="leased", token=lease.token, expires_at=lease.expires_at)
    await store.finalize(lease, _request(1))
    report(event="committed", n=1)

    def trace(statement: str) -> None:
        # The receipts upsert is the last write of a finalize: everything else of write 2 has run by then.
        if statement.lstrip().upper().startswith("INSERT INTO RECEIPTS"):
            report(event="mid-transaction", n=2)
            wait_for_parent()

    # The trace hook runs on the store's worker thread as each statement starts.
    await store._call(lambda conn: conn.set_trace_callback(trace))
    await store.finalize(lease, _request(2))
    report(event="committed", n=2)


async def touch(store: SQLiteStore, key: str, owner: str) -> None:
    """Open a (possibly fresh) store at the same moment as others and write once."""
    report(event="ready")
    wait_for_parent()
    lease = await store.acquire_lease(key, owner, 60)
    await store.finalize(lease, FinalizeRequest(status=owner))
    await store.release_lease(lease)
    report(event="done", owner=owner)


async def main(argv: list[str]) -> None:
    mode, db, key, owner, *rest = argv
    store = SQLiteStore(db)
    try:
        if mode == "contend":
            await contend(store, key, owner, int(rest[0]), float(rest[1]))
        elif mode == "hold":
            await hold(store, key, owner, float(rest[0]))
        elif mode == "finalize-loop":
            await finalize_loop(store, key, owner)
        elif mode == "block-in-commit":
            await block_in_commit(store, key, owner)
        elif mode == "touch":
            await touch(store, key, owner)
        else:
            raise SystemExit(f"unknown mode {mode!r}")
    finally:
        store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
