"""A failing finalize: thread.persistence notices, retries under the lease, the checkpoint kept in process."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adaptor_nb import Agent, Notice, Result, Stream
from adaptor_nb.drivers import reference
from adaptor_nb.threadstore import FinalizeRequest, Lease, SQLiteStore, ThreadRecord

ATTEMPTS = 3  # what the core tries per run before it keeps the checkpoint in process


class FailingStore(SQLiteStore):
    """A real SQLite store whose next ``failures`` finalize calls fail as a full disk would."""

    def __init__(self, path: Path, failures: int) -> None:
        super().__init__(path)
        self.failures = failures
        self.calls: list[str] = []

    async def finalize(self, lease: Lease, request: FinalizeRequest) -> ThreadRecord:
        self.calls.append(lease.token)
        if self.failures > 0:
            self.failures -= 1
            raise sqlite3.OperationalError("database or disk is full")
        return await super().finalize(lease, request)


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[tuple[Agent, FailingStore]]:
    store = FailingStore(tmp_path / "threads.sqlite", failures=0)
    agent = Agent(reference.Driver(), model="m", workspace=str(tmp_path), thread_store=store)
    yield agent, store
    await agent.close()
    store.close()


async def run(stream: Stream) -> tuple[Result, list[Notice]]:
    notices = [ev async for ev in stream.events() if isinstance(ev, Notice) and ev.kind == "thread.persistence"]
    return await stream.result(), notices


async def test_one_failed_save_is_retried_and_reported(setup: tuple[Agent, FailingStore]) -> None:
    agent, store = setup
    store.failures = 1
    result, notices = await run(agent.thread("review").send("hello"))
    assert [n.data["attempt"] for n in notices] == [1]
    assert "database or disk is full" in notices[0].data["error"]
    assert len(store.calls) == 2 and len(set(store.calls)) == 1, "the retry must use the same lease"
    record = await store.resolve("review")
    assert record is not None and record.checkpoint is not None
    assert record.checkpoint.run_id == result.run_id


async def test_when_every_attempt_fails_the_next_run_saves_the_retained_checkpoint(
    setup: tuple[Agent, FailingStore],
) -> None:
    agent, store = setup
    thread = agent.thread("review")
    store.failures = ATTEMPTS
    first, notices = await run(thread.send("hello"))
    assert [n.data.get("attempt") for n in notices] == [1, 2, 3, None]
    assert notices[-1].data["final"] is True and notices[-1].data["retained_in_process"] is True
    assert await store.resolve("review") is None
    kept = await thread.checkpoint()
    assert kept is not None and kept.run_id == first.run_id, "the newest checkpoint must stay in the process"

    second, notices = await run(thread.send("again"))
    assert notices == []
    assert "This conversation has 1 earlier prompt." in second.text, "the next run must resume the kept checkpoint"
    record = await store.resolve("review")
    assert record is not None and record.checkpoint is not None
    assert record.checkpoint.session_id == kept.session_id and record.checkpoint.run_id == second.run_id


async def test_nothing_of_an_unsaved_run_is_lost_when_the_next_run_saves(tmp_path: Path) -> None:
    gate = reference.Gate()
    scenario = reference.Scenario(reference.Turn(reference.Text("working"), gate, reference.Text(" done")))
    store = FailingStore(tmp_path / "threads.sqlite", failures=ATTEMPTS)
    agent = Agent(reference.Driver(scenario=scenario), model="m", workspace=str(tmp_path), thread_store=store)
    try:
        thread = agent.thread("review")
        stream = thread.send("hello")
        events = asyncio.ensure_future(run(stream))
        await gate.reached.wait()
        await stream.send("also check the docs", id="comment-17")
        gate.open()
        first, notices = await events
        assert notices[-1].data["final"] is True
        await run(thread.send("again"))
        record = await store.resolve("review")
        assert record is not None
        assert "comment-17" in record.receipts, "the unsaved run's delivered-message receipt is lost"
        assert record.runs == 2, f"the unsaved run was not counted: runs={record.runs}"
        kinds = [(h.kind, h.text) for h in record.history]
        assert ("guidance", "also check the docs") in kinds, f"the unsaved run's guidance is lost: {kinds}"
        assert ("assistant", first.text) in kinds, f"the unsaved run's answer is lost: {kinds}"
    finally:
        await agent.close()
        store.close()
