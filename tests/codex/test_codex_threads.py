"""Threads on the real Codex CLI: one persistent app-server per Thread, spawn=True, resume in a new process,
fork, and what happens when Codex refuses to resume."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from adaptor_nb import Agent, Notice, ResumeRejectedError
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.threadstore import MemoryStore

from .conftest import DriverFactory
from .helpers import alive, of, run_all, spawned_pids

pytestmark = pytest.mark.codex


async def test_a_thread_keeps_one_app_server_between_runs(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        thread = agent.thread("review")
        first, r1, _ = await run_all(thread.send("one [[say first]]"))
        (pid,) = spawned_pids(first)
        assert alive(pid)
        second, r2, _ = await run_all(thread.send("two [[say second]]"))
        assert spawned_pids(second) == []
        assert r1 is not None and r2 is not None
        assert (r1.text, r2.text) == ("first", "second")
        assert r1.metadata["thread_id"] == r2.metadata["thread_id"]
        checkpoint = await thread.checkpoint()
        assert checkpoint is not None and checkpoint.session_id == r2.metadata["thread_id"]
    assert not alive(pid)
    history = fake.model_requests[-1]
    assert history.user_texts() == ["one [[say first]]", "two [[say second]]"]
    assert "first" in history.texts("assistant")


async def test_spawn_runs_a_fresh_process_that_resumes_the_conversation(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        thread = agent.thread("review")
        first, r1, _ = await run_all(thread.send("one [[say first]]"))
        second, r2, _ = await run_all(thread.send("two [[say second]]", spawn=True))
        (parked,) = spawned_pids(first)
        (fresh,) = spawned_pids(second)
        assert parked != fresh
        assert not alive(parked)
        assert not alive(fresh)
        assert r1 is not None and r2 is not None
        assert r1.metadata["thread_id"] == r2.metadata["thread_id"]
    assert fake.model_requests[-1].user_texts() == ["one [[say first]]", "two [[say second]]"]


async def test_a_recreated_agent_resumes_the_thread_in_a_new_app_server(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    store = MemoryStore()
    async with Agent(make_driver(), workspace=str(workspace), thread_store=store) as agent:
        r1 = await agent.thread("review").send("remember the number 42 [[say noted]]").result()
    async with Agent(make_driver(), workspace=str(workspace), thread_store=store) as agent:
        events, r2, error = await run_all(agent.thread("review", resume_only=True).send("which number?"))
    assert error is None and r2 is not None
    assert len(spawned_pids(events)) == 1
    assert r2.metadata["thread_id"] == r1.metadata["thread_id"]
    assert fake.model_requests[-1].user_texts() == ["remember the number 42 [[say noted]]", "which number?"]
    assert not [n for n in of(events, Notice) if n.kind == "thread.continuity"]


async def test_a_fork_continues_from_the_parent_in_a_new_codex_thread(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        parent = agent.thread("main")
        r1 = await parent.send("shared start [[say base]]").result()
        child = parent.fork("branch")
        r2 = await child.send("in the branch [[say branched]]").result()
        r3 = await parent.send("in the parent [[say still main]]").result()
    assert r2.metadata["thread_id"] != r1.metadata["thread_id"]
    assert r3.metadata["thread_id"] == r1.metadata["thread_id"]
    branch_request, parent_request = fake.model_requests[-2:]
    assert branch_request.user_texts() == ["shared start [[say base]]", "in the branch [[say branched]]"]
    assert parent_request.user_texts() == ["shared start [[say base]]", "in the parent [[say still main]]"]


def forget_sessions(codex_home: Path) -> None:
    """Make Codex unable to resume anything: drop its rollouts and state databases."""
    shutil.rmtree(codex_home / "sessions", ignore_errors=True)
    for db in codex_home.glob("*.sqlite*"):
        db.unlink()


async def test_a_refused_resume_falls_back_to_a_fresh_session_with_a_notice(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path, codex_home: Path
) -> None:
    store = MemoryStore()
    async with Agent(make_driver(), workspace=str(workspace), thread_store=store) as agent:
        r1 = await agent.thread("review").send("earlier [[say earlier answer]]").result()
    forget_sessions(codex_home)
    async with Agent(make_driver(), workspace=str(workspace), thread_store=store) as agent:
        events, r2, error = await run_all(agent.thread("review").send("again [[say fresh]]"))
    assert error is None and r2 is not None
    assert r2.text == "fresh"
    assert r2.metadata["thread_id"] != r1.metadata["thread_id"]
    (continuity,) = [n for n in of(events, Notice) if n.kind == "thread.continuity"]
    assert continuity.data["reason"] == "resume_rejected"
    prompt = fake.model_requests[-1].prompt
    assert prompt.endswith("again [[say fresh]]")
    assert "earlier answer" in prompt  # the bounded recovery context of the fresh session
    assert not any(pid for pid in spawned_pids(events) if alive(pid))


async def test_resume_only_fails_instead_of_starting_fresh(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path, codex_home: Path
) -> None:
    store = MemoryStore()
    async with Agent(make_driver(), workspace=str(workspace), thread_store=store) as agent:
        await agent.thread("review").send("earlier").result()
    forget_sessions(codex_home)
    requests_before = len(fake.model_requests)
    async with Agent(make_driver(), workspace=str(workspace), thread_store=store) as agent:
        events, _, error = await run_all(agent.thread("review", resume_only=True).send("again"))
    assert isinstance(error, ResumeRejectedError)
    assert "refused to resume" in str(error)
    assert len(fake.model_requests) == requests_before
    assert len(spawned_pids(events)) == 1
    assert not any(alive(pid) for pid in spawned_pids(events))
