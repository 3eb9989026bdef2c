"""Threads across OS processes through the public API: exclusion, takeover after kill -9, resume, deduplication."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from adaptor_nb import Agent, Notice, ThreadBusyError
from adaptor_nb.drivers import reference
from adaptor_nb.threadstore import SQLiteStore

from .conftest import HERE, Worker

THREAD_WORKER = HERE / "thread_worker.py"


class Kernels:
    """Starts thread_worker.py processes ("kernels") that share one store file and one session directory."""

    def __init__(self, tmp: Path, start: Callable[..., Worker]) -> None:
        self.db = tmp / "nb.adaptor_nb.sqlite"
        self.state = tmp / "sessions"
        self.workspace = tmp / "ws"
        self.state.mkdir()
        self.workspace.mkdir()
        self._start = start

    def spec(self, prompt: str, **extra: Any) -> dict[str, Any]:
        return {
            "db": str(self.db),
            "state": str(self.state),
            "workspace": str(self.workspace),
            "key": "review",
            "prompt": prompt,
            **extra,
        }

    def start(self, prompt: str, **extra: Any) -> Worker:
        return self._start(json.dumps(self.spec(prompt, **extra)), script=THREAD_WORKER)

    def run(self, prompt: str, **extra: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """Run one send in a fresh process to its end; returns (checkpoint before, result) reports."""
        proc = self.start(prompt, **extra)
        before = proc.read_until("checkpoint")
        result = proc.read_until("result")
        proc.finish()
        return before, result

    def agent(self) -> tuple[Agent, SQLiteStore]:
        """An Agent in this (test) process with the same configuration as the kernels."""
        store = SQLiteStore(self.db)
        driver = reference.Driver(reference.Config(state_dir=str(self.state)))
        return Agent(driver, model="m", workspace=str(self.workspace), thread_store=store), store


@pytest.fixture
def kernels(tmp_path: Path, workers: Callable[..., Worker]) -> Iterator[Kernels]:
    yield Kernels(tmp_path, workers)


async def test_a_second_process_gets_thread_busy_while_the_first_runs_then_continues(kernels: Kernels) -> None:
    first = kernels.start("first prompt", gate=True)
    first.read_until("running")
    agent, store = kernels.agent()
    try:
        with pytest.raises(ThreadBusyError):
            await agent.thread("review").send("second prompt").result()
        first.send("go")
        done = first.read_until("result")
        assert done["ok"] and done["text"] == "working on it finished", done
        first.finish()
        result = await agent.thread("review").send("third prompt").result()
        assert "This conversation has 1 earlier prompt." in result.text
    finally:
        await agent.close()
        store.close()


async def test_a_killed_owner_is_taken_over_at_once_and_resumes_the_last_healthy_checkpoint(
    kernels: Kernels,
) -> None:
    _, healthy = kernels.run("first prompt")
    assert healthy["ok"], healthy
    victim = kernels.start("second prompt", gate=True, lease_ttl=600)
    victim.read_until("running")
    victim.kill9()  # a kernel killed mid-run: its lease would otherwise keep the thread busy for ten minutes

    agent, store = kernels.agent()
    try:
        thread = agent.thread("review")
        stream = thread.send("third prompt")
        events = [e async for e in stream.events()]
        result = await stream.result()
        taken = [e for e in events if isinstance(e, Notice) and e.metadata.get("code") == "thread.lease_taken_over"]
        assert len(taken) == 1 and f"process {victim.pid} on this machine" in taken[0].text
        # The killed run never completed, so the thread resumed the first run's session (one earlier prompt).
        assert "This conversation has 1 earlier prompt." in result.text
        checkpoint = await thread.checkpoint()
        assert checkpoint is not None and checkpoint.session_id == healthy["session_id"]
        assert checkpoint.run_id == result.run_id
    finally:
        await agent.close()
        store.close()


async def test_a_restart_resumes_the_last_healthy_checkpoint_not_a_failed_run(kernels: Kernels) -> None:
    _, first = kernels.run("first prompt")
    assert first["ok"], first
    # Another model: the thread falls back to a fresh session, and that run fails.
    _, failed = kernels.run("second prompt", model="other", fail=True)
    assert not failed["ok"] and failed["error"] == "AgentFailed", failed
    assert [n["kind"] for n in failed["notices"]] == ["thread.continuity"]

    before, third = kernels.run("third prompt")
    assert (before["session_id"], before["run_id"]) == (first["session_id"], first["checkpoint_run_id"])
    assert third["ok"] and "This conversation has 1 earlier prompt." in third["text"], third
    assert third["session_id"] == first["session_id"] and third["checkpoint_run_id"] == third["run_id"]


async def test_a_duplicate_starting_message_id_is_deduplicated_across_a_restart(kernels: Kernels) -> None:
    _, first = kernels.run("deploy the fix", id="msg-1")
    assert first["ok"] and first["turns"] == 1, first
    _, again = kernels.run("deploy the fix", id="msg-1")
    assert again["ok"] and (again["turns"], again["text"]) == (0, ""), again
    _, other = kernels.run("and now the docs", id="msg-2")
    assert other["turns"] == 1 and "This conversation has 1 earlier prompt." in other["text"], other


async def test_a_duplicate_supplemental_message_id_is_deduplicated_across_a_restart(kernels: Kernels) -> None:
    extra = {"gate": True, "message": "also check the docs", "message_id": "comment-17"}
    for prompt in ("first prompt", "second prompt"):
        proc = kernels.start(prompt, **extra)
        proc.read_until("sent")
        proc.send("go")
        report = proc.read_until("result")
        proc.finish()
        assert report["ok"], report
        if prompt == "first prompt":
            assert report["messages"] == [{"id": "comment-17", "state": "DELIVERED"}], report
            assert report["updates"][-1]["mechanism"] == "in_run", report
        else:
            assert report["updates"][-1] == {"id": "comment-17", "state": "DELIVERED", "mechanism": "deduplicated"}
    # The provider saw: first prompt, the comment, second prompt; not the comment a second time.
    _, last = kernels.run("third prompt")
    assert "This conversation has 3 earlier prompts." in last["text"], last
