"""Real OS processes on one SQLite file: lease exclusion, takeover after a kill -9, crash-consistent finalize."""

from __future__ import annotations

import asyncio
import itertools
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from adaptor_nb._errors import ThreadBusyError, ThreadLeaseLostError
from adaptor_nb.driver import Checkpoint
from adaptor_nb.threadstore import FinalizeRequest, Lease, SQLiteStore, ThreadRecord
from adaptor_nb.threadstore._protocol import HISTORY_LIMIT
from adaptor_nb.threadstore._sqlite import MIGRATIONS

from .conftest import Worker

Start = Callable[..., Worker]


def integrity(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        result: str = conn.execute("PRAGMA integrity_check").fetchone()[0]
        return result


async def resolve(db: Path, key: str) -> ThreadRecord | None:
    store = SQLiteStore(db)
    try:
        return await store.resolve(key)
    finally:
        store.close()


def assert_exclusive(intervals: list[dict[str, Any]]) -> None:
    """No two ownership intervals overlap (monotonic clock, shared by every process on the machine)."""
    ordered = sorted(intervals, key=lambda i: i["start"])
    for before, after in itertools.pairwise(ordered):
        assert after["start"] > before["end"], (
            f"two owners at once: {before['owner']} held [{before['start']}, {before['end']}] and "
            f"{after['owner']} took over at {after['start']}"
        )


async def test_four_processes_never_own_one_thread_at_once(db_path: Path, workers: Start) -> None:
    procs = [workers("contend", str(db_path), "shared", f"proc-{i}", "50", "5") for i in range(4)]
    for p in procs:
        assert p.read()["event"] == "ready"
    for p in procs:
        p.send("go")
    held: list[dict[str, Any]] = []
    summaries: list[dict[str, Any]] = []
    for p in procs:
        while (report := p.read())["event"] != "done":
            if report["event"] == "held":
                held.append(report)
        summaries.append(report)
        p.finish()

    assert all(s["wins"] + s["busy"] == 50 for s in summaries), summaries
    assert sum(s["busy"] for s in summaries) > 0, f"the processes never contended: {summaries}"
    assert_exclusive(held)
    record = await resolve(db_path, "shared")
    assert record is not None
    wins = sum(s["wins"] for s in summaries)
    assert record.runs == wins, f"lost updates: {wins} finalizes counted {record.runs} runs"
    assert len(record.receipts) == wins


def move_holder_elsewhere(db: Path, key: str) -> None:
    """Make the lease of ``key`` look taken on another machine, whose processes this one cannot see."""
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE leases SET holder_host = 'another-machine|boot|pid:[1]' WHERE key = ?", (key,))


async def test_a_killed_owner_on_another_machine_blocks_until_expiry_then_the_next_process_takes_over(
    db_path: Path, workers: Start
) -> None:
    owner = workers("hold", str(db_path), "review", "kernel-1", "3")
    held = owner.read_until("holding")
    owner.kill9()
    move_holder_elsewhere(db_path, "review")  # from here its death cannot be seen: only expiry frees the thread
    dead = Lease("review", "kernel-1", held["token"], held["expires_at"])

    store = SQLiteStore(db_path)
    try:
        busy_seen = 0
        while True:
            asked_at = time.time()
            try:
                lease = await store.acquire_lease("review", "kernel-2", 30)
            except ThreadBusyError:
                assert asked_at < dead.expires_at, "the lease was still refused after it expired"
                busy_seen += 1
                await asyncio.sleep(max(0.0, dead.expires_at - time.time()))  # expiry is what is tested
                continue
            assert time.time() >= dead.expires_at, "the dead owner's lease was taken before it expired"
            break
        assert busy_seen >= 1, "the dead owner's unexpired lease did not exclude the next process"

        record = await store.resolve("review")
        assert record is not None and record.checkpoint is not None
        assert record.checkpoint.session_id == "session-of-kernel-1"
        saved = await store.finalize(lease, FinalizeRequest(status="taken over", run_id="r2"))
        assert (saved.runs, saved.checkpoint) == (2, record.checkpoint)
        try:
            await store.finalize(dead, FinalizeRequest(status="zombie"))
        except ThreadLeaseLostError:
            pass
        else:
            raise AssertionError("the dead owner's lease could still write")
    finally:
        store.close()


async def test_a_killed_owner_on_this_machine_is_taken_over_at_once(db_path: Path, workers: Start) -> None:
    owner = workers("hold", str(db_path), "review", "kernel-1", "600")
    held = owner.read_until("holding")
    pid = owner.pid
    owner.kill9()
    dead = Lease("review", "kernel-1", held["token"], held["expires_at"])
    store = SQLiteStore(db_path)
    try:
        assert time.time() < dead.expires_at - 500  # the dead lease is far from expiring
        lease = await store.acquire_lease("review", "kernel-2", 30)
        assert lease.took_over.startswith(f"kernel-1 (process {pid} on this machine")
        record = await store.resolve("review")
        assert record is not None and record.checkpoint is not None
        assert record.checkpoint.session_id == "session-of-kernel-1"  # taking the lease keeps the thread's state
        try:
            await store.finalize(dead, FinalizeRequest(status="zombie"))
        except ThreadLeaseLostError:
            pass
        else:
            raise AssertionError("the dead owner's lease could still write")
        await store.release_lease(lease)
    finally:
        store.close()


async def test_a_live_owner_in_another_process_keeps_the_thread(db_path: Path, workers: Start) -> None:
    owner = workers("hold", str(db_path), "review", "kernel-1", "60")
    held = owner.read_until("holding")
    store = SQLiteStore(db_path)
    try:
        try:
            await store.acquire_lease("review", "kernel-2", 30)
        except ThreadBusyError as exc:
            assert exc.details["owner"] == "kernel-1"
            assert exc.details["pid"] == owner.pid and f"process {owner.pid} on this machine" in str(exc)
        else:
            raise AssertionError("a second process acquired a thread another process owns")
        forged = Lease("review", "kernel-2", held["token"], held["expires_at"])
        try:
            await store.finalize(forged, FinalizeRequest(status="intruder"))
        except ThreadLeaseLostError:
            pass
        else:
            raise AssertionError("a lease with another owner's name could write")
    finally:
        store.close()
    owner.send("stop")
    owner.finish()


def expected_after(n: int, record: ThreadRecord) -> None:
    """Every part of the record agrees that exactly writes 1..n of the finalize loop committed."""
    assert record.runs == n
    assert record.checkpoint == Checkpoint(
        session_id=f"s{n}", driver="reference", fingerprint=f"fp-{n}", run_id=f"r{n}"
    )
    assert record.fingerprint == f"fp-{n}" and record.last_run_id == f"r{n}"
    assert [c.session_id for c in record.archived] == [f"s{i}" for i in range(max(1, n - HISTORY_LIMIT), n)]
    assert [h.text.split(" x")[0] for h in record.history] == [
        f"answer {i}" for i in range(max(1, n - HISTORY_LIMIT + 1), n + 1)
    ]
    assert {m.split("-")[0] for m in record.receipts} == {f"m{i}" for i in range(max(1, n - 19), n + 1)}
    assert record.usage == {"input_tokens": n}


async def test_kill9_inside_finalize_leaves_the_previous_write(db_path: Path, workers: Start) -> None:
    proc = workers("block-in-commit", str(db_path), "k", "writer")
    leased = proc.read_until("leased")
    assert proc.read_until("committed")["n"] == 1
    assert proc.read_until("mid-transaction")["n"] == 2
    proc.kill9()

    assert integrity(db_path) == "ok"
    record = await resolve(db_path, "k")
    assert record is not None
    expected_after(1, record)
    # The dead writer held the write lock; the kill released it and the same lease can write again.
    store = SQLiteStore(db_path)
    try:
        lease = Lease("k", "writer", leased["token"], leased["expires_at"])
        saved = await store.finalize(lease, FinalizeRequest(status="recovered", count_run=False))
        assert saved.runs == 1 and saved.last_status == "recovered"
    finally:
        store.close()


async def test_kill9_at_random_moments_of_a_finalize_loop_leaves_a_consistent_store(
    db_path: Path, workers: Start
) -> None:
    rng = random.Random(20240611)
    committed_before = 0
    for round_ in range(5):
        key = f"k{round_}"
        proc = workers("finalize-loop", str(db_path), key, "writer")
        proc.read_until("leased")
        target = rng.randint(2, 40)
        while (report := proc.read())["event"] != "begin" or report["n"] < target:
            pass
        proc.kill9()  # the worker is inside (or just past) finalize number `target`
        assert integrity(db_path) == "ok"
        record = await resolve(db_path, key)
        assert record is not None
        assert record.runs in (target - 1, target), f"round {round_}: runs={record.runs}, killed in {target}"
        expected_after(record.runs, record)
        committed_before += record.runs
    assert committed_before > 0


async def test_processes_creating_one_fresh_file_at_once_agree_on_its_schema(db_path: Path, workers: Start) -> None:
    procs = [workers("touch", str(db_path), f"k{i}", f"proc-{i}") for i in range(4)]
    for p in procs:
        assert p.read()["event"] == "ready"
    assert not db_path.exists()  # noqa: ASYNC240 - the workers create it
    for p in procs:
        p.send("go")
    for p in procs:
        assert p.read_until("done")["event"] == "done"
        p.finish()
    for i in range(4):
        record = await resolve(db_path, f"k{i}")
        assert record is not None and record.last_status == f"proc-{i}"
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(MIGRATIONS)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
