"""Threads on the real CodeBuddy Code CLI: --resume in a new process, --fork-session, an unknown session id."""

from __future__ import annotations

import asyncio
import json
import sys
from asyncio.subprocess import PIPE
from pathlib import Path

import psutil
import pytest
from _support import drain, ends_its_loop, of

from adaptor_nb import Agent, Notice, ProcessInfo, ProcessKind, ResumeRejectedError
from adaptor_nb.testing import FakeChatCompletionsServer
from adaptor_nb.threadstore import MemoryStore

from .conftest import DriverFactory

pytestmark = pytest.mark.codebuddy


def history(fake: FakeChatCompletionsServer) -> str:
    return "\n".join(fake.model_requests[-1].user_queries())


async def test_resume_after_the_agent_is_recreated(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    store = MemoryStore()
    driver = make_driver()
    async with Agent(driver, workspace=str(workspace), thread_store=store) as first:
        r1 = await first.thread("durable").send("the secret word is pumpkin [[say ok]]").result()
    async with Agent(driver, workspace=str(workspace), thread_store=store) as second:
        events, r2, err = await drain(second.thread("durable", resume_only=True).send("word? [[say pumpkin]]"))
    assert err is None and r2 is not None and r2.text == "pumpkin"
    assert r2.metadata["session_id"] == r1.metadata["session_id"]
    spawn = next(p for p in of(events, ProcessInfo) if p.kind is ProcessKind.SPAWN)
    assert "--resume" in spawn.data["argv"] and spawn.metadata["resume"] == r1.metadata["session_id"]
    assert "the secret word is pumpkin" in history(fake)


async def test_fork_gets_a_new_session_with_the_history(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        parent = agent.thread("parent")
        r1 = await parent.send("base fact: tea [[say ok]]").result()
        events, r2, err = await drain(parent.fork("child").send("fact? [[say tea]]"))
        assert err is None and r2 is not None
        spawn = next(p for p in of(events, ProcessInfo) if p.kind is ProcessKind.SPAWN)
        assert "--fork-session" in spawn.data["argv"]
        assert r2.metadata["session_id"] != r1.metadata["session_id"]
        assert "base fact: tea" in history(fake)
        r3 = await parent.send("parent again [[say parent]]").result()
    assert r3.metadata["session_id"] == r1.metadata["session_id"]


def forget_sessions(home: Path, session_id: str) -> None:
    files = list(home.joinpath(".codebuddy", "projects").rglob(f"{session_id}.jsonl"))
    assert files, "the CLI should have saved the session"
    for f in files:
        f.unlink()


async def test_an_unknown_session_falls_back_once_to_a_fresh_session(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path, home: Path
) -> None:
    store = MemoryStore()
    driver = make_driver()
    async with Agent(driver, workspace=str(workspace), thread_store=store) as first:
        r1 = await first.thread("lost").send("remember [[say ok]]").result()
    forget_sessions(home, r1.metadata["session_id"])
    async with Agent(driver, workspace=str(workspace), thread_store=store) as second:
        events, r2, err = await drain(second.thread("lost").send("hello again [[say fresh]]"))
        assert err is None and r2 is not None and r2.text == "fresh"
        assert r2.metadata["session_id"] != r1.metadata["session_id"]
        notes = [n for n in of(events, Notice) if n.kind == "thread.continuity"]
        assert len(notes) == 1 and notes[0].data["reason"] == "resume_rejected"


async def test_resume_only_fails_when_the_session_is_gone(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path, home: Path
) -> None:
    store = MemoryStore()
    driver = make_driver()
    async with Agent(driver, workspace=str(workspace), thread_store=store) as first:
        r1 = await first.thread("gone").send("remember [[say ok]]").result()
    forget_sessions(home, r1.metadata["session_id"])
    async with Agent(driver, workspace=str(workspace), thread_store=store) as second:
        _, r2, err = await drain(second.thread("gone", resume_only=True).send("hello [[say no]]"))
    assert r2 is None
    assert isinstance(err, ResumeRejectedError) and "No conversation found" in str(err)


async def test_a_script_whose_event_loop_ends_with_a_parked_thread_exits_and_kills_the_cli(
    make_driver: DriverFactory, workspace: Path
) -> None:
    cfg = make_driver().config
    fields = {k: getattr(cfg, k) for k in ("command", "env", "secret_env", "grace_period")}
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", ends_its_loop("codebuddy"), json.dumps(fields), str(workspace), stdout=PIPE, stderr=PIPE
    )
    out, err = await asyncio.wait_for(child.communicate(), 120)  # the fake model server answers from this loop
    assert child.returncode == 0, err.decode()[-2000:]
    pid_line, returned = out.decode().split()
    assert returned == "returned"  # asyncio.run came back instead of waiting for the CLI for ever
    pid = int(pid_line)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
