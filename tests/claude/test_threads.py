"""Threads on the real CLI: one persistent process per Thread, respawn rules, resume, fork and fallback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from _support import ends_its_loop

from adaptor_nb import (
    Agent,
    InvalidDriverConfigError,
    Notice,
    ProcessInfo,
    ProcessKind,
    ResumeRejectedError,
    ThreadCheckpointMissingError,
)
from adaptor_nb.drivers import claude
from adaptor_nb.testing._anthropic import FakeAnthropicServer
from adaptor_nb.threadstore import MemoryStore

from .helpers import drain, of

pytestmark = pytest.mark.claude


def spawns(events: list) -> list[int]:
    return [p.data["pid"] for p in of(events, ProcessInfo) if p.kind is ProcessKind.SPAWN]


async def test_a_thread_keeps_one_process_across_sends(agent_factory, fake: FakeAnthropicServer) -> None:
    thread = agent_factory().thread("keep")
    ev1, r1, _ = await drain(thread.send("one [[say first]]"))
    ev2, r2, _ = await drain(thread.send("two [[say second]]"))
    ev3, r3, _ = await drain(thread.send("three [[say third]]"))
    [pid] = spawns(ev1)
    assert spawns(ev2) == [] and spawns(ev3) == []
    assert psutil.pid_exists(pid)
    assert [r.text for r in (r1, r2, r3)] == ["first", "second", "third"]
    sizes = [len(r.messages) for r in fake.message_requests]
    assert sizes[0] < sizes[1] < sizes[2]  # the same conversation grows
    ckpt = await thread.checkpoint()
    assert ckpt is not None and ckpt.session_id == r3.metadata["session_id"] == r1.metadata["session_id"]


async def test_direct_sends_use_a_fresh_process_each_time(agent_factory) -> None:
    agent = agent_factory()
    ev1, r1, _ = await drain(agent.send("a [[say a]]"))
    ev2, r2, _ = await drain(agent.send("b [[say b]]"))
    [p1], [p2] = spawns(ev1), spawns(ev2)
    assert p1 != p2
    assert not psutil.pid_exists(p1)
    assert r1.metadata["session_id"] != r2.metadata["session_id"]


async def test_spawn_true_uses_a_fresh_process_that_resumes_the_thread(agent_factory, fake) -> None:
    thread = agent_factory().thread("spawned")
    ev1, r1, _ = await drain(thread.send("remember 42 [[say noted]]"))
    ev2, r2, _ = await drain(thread.send("what was it? [[say it was 42]]", spawn=True))
    [p1], [p2] = spawns(ev1), spawns(ev2)
    assert p1 != p2
    assert not psutil.pid_exists(p1) and not psutil.pid_exists(p2)  # neither stays behind after a spawn run
    assert r2.metadata["session_id"] == r1.metadata["session_id"]
    assert "remember 42" in fake.message_requests[-1].text_of_all_messages()
    ev3, _r3, _ = await drain(thread.send("again [[say again]]"))
    assert len(spawns(ev3)) == 1  # the next ordinary send starts the thread's persistent process


async def test_a_schema_change_respawns_and_continues_the_session(agent_factory, fake) -> None:
    thread = agent_factory().thread("schema")
    ev1, r1, _ = await drain(thread.send("hello [[say hi]]"))
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    ev2, r2, err = await drain(thread.send('num [[structured {"n": 7}]]', schema=schema))
    assert err is None and r2 is not None and r2.structured == {"n": 7}
    [p1], [p2] = spawns(ev1), spawns(ev2)
    assert p1 != p2 and not psutil.pid_exists(p1)
    assert r2.metadata["session_id"] == r1.metadata["session_id"]
    assert "hello [[say hi]]" in fake.message_requests[-1].text_of_all_messages()


async def test_a_model_change_starts_over_with_a_continuity_notice(agent_factory) -> None:
    thread = agent_factory(model="claude-model-a").thread("models")
    ev1, _r1, _ = await drain(thread.send("x [[say on a]]"))
    ev2, r2, _ = await drain(thread.send("y [[say on b]]", model="claude-model-b"))
    assert r2.model == "claude-model-b"
    [p1], [p2] = spawns(ev1), spawns(ev2)
    assert p1 != p2
    notes = [n for n in of(ev2, Notice) if n.kind == "thread.continuity"]
    assert notes and notes[0].data["reason"] == "incompatible"


async def test_agent_close_reaps_every_thread_process(agent_factory) -> None:
    agent = agent_factory()
    pids = []
    for key in ("a", "b"):
        events, _, _ = await drain(agent.thread(key).send(f"{key} [[say {key}]]"))
        pids += spawns(events)
    assert all(psutil.pid_exists(p) for p in pids)
    await agent.close()
    assert not any(psutil.pid_exists(p) for p in pids)


async def test_resume_after_the_agent_is_recreated(make_config, workspace: Path, fake) -> None:
    store = MemoryStore()
    cfg = make_config()
    async with Agent(claude.Driver(cfg), workspace=str(workspace), thread_store=store) as first:
        r1 = await first.thread("durable").send("the secret word is pumpkin [[say ok]]").result()
    async with Agent(claude.Driver(cfg), workspace=str(workspace), thread_store=store) as second:
        events, r2, err = await drain(second.thread("durable", resume_only=True).send("word? [[say pumpkin]]"))
    assert err is None and r2 is not None
    assert r2.metadata["session_id"] == r1.metadata["session_id"]
    spawn = next(p for p in of(events, ProcessInfo) if p.kind is ProcessKind.SPAWN)
    assert "--resume" in spawn.data["argv"] and spawn.metadata["resume"] == r1.metadata["session_id"]
    assert "the secret word is pumpkin" in fake.message_requests[-1].text_of_all_messages()


async def test_fork_gets_a_new_session_with_the_history(agent_factory, fake) -> None:
    agent = agent_factory()
    parent = agent.thread("parent")
    r1 = await parent.send("base fact: tea [[say ok]]").result()
    child = parent.fork("child")
    events, r2, err = await drain(child.send("fact? [[say tea]]"))
    assert err is None and r2 is not None
    spawn = next(p for p in of(events, ProcessInfo) if p.kind is ProcessKind.SPAWN)
    assert "--fork-session" in spawn.data["argv"]
    assert r2.metadata["session_id"] != r1.metadata["session_id"]
    assert "base fact: tea" in fake.message_requests[-1].text_of_all_messages()
    r3 = await parent.send("parent again [[say parent]]").result()
    assert r3.metadata["session_id"] == r1.metadata["session_id"]


async def test_unknown_session_falls_back_once_to_a_fresh_session(make_config, workspace: Path, home: Path) -> None:
    store = MemoryStore()
    cfg = make_config()
    async with Agent(claude.Driver(cfg), workspace=str(workspace), thread_store=store) as first:
        r1 = await first.thread("lost").send("remember [[say ok]]").result()
    # The CLI's session files vanish (a new machine, a cleaned HOME): resume is rejected before the prompt.
    for f in home.joinpath(".claude", "projects").rglob(f"{r1.metadata['session_id']}.jsonl"):
        f.unlink()
    async with Agent(claude.Driver(cfg), workspace=str(workspace), thread_store=store) as second:
        events, r2, err = await drain(second.thread("lost").send("hello again [[say fresh]]"))
        assert err is None and r2 is not None and r2.text == "fresh"
        assert r2.metadata["session_id"] != r1.metadata["session_id"]
        notes = [n for n in of(events, Notice) if n.kind == "thread.continuity"]
        assert len(notes) == 1 and notes[0].data["reason"] == "resume_rejected"
        events, r3, err = await drain(second.thread("lost", resume_only=True).send("still? [[say yes]]"))
        assert err is None and r3 is not None and r3.metadata["session_id"] == r2.metadata["session_id"]


async def test_resume_only_fails_when_the_session_is_gone(make_config, workspace: Path, home: Path) -> None:
    store = MemoryStore()
    cfg = make_config()
    async with Agent(claude.Driver(cfg), workspace=str(workspace), thread_store=store) as first:
        r1 = await first.thread("gone").send("remember [[say ok]]").result()
    for f in home.joinpath(".claude", "projects").rglob(f"{r1.metadata['session_id']}.jsonl"):
        f.unlink()
    async with Agent(claude.Driver(cfg), workspace=str(workspace), thread_store=store) as second:
        _events, r2, err = await drain(second.thread("gone", resume_only=True).send("hello [[say no]]"))
    assert r2 is None
    assert isinstance(err, ResumeRejectedError) and "No conversation found" in str(err)


async def test_fork_without_a_checkpoint_is_refused(agent_factory) -> None:
    agent = agent_factory()
    events, result, err = await drain(agent.thread("empty").fork("child").send("x"))
    assert result is None and isinstance(err, ThreadCheckpointMissingError)
    assert not [p for p in of(events, ProcessInfo) if p.kind is ProcessKind.SPAWN]


async def test_a_process_environment_change_between_sends_starts_a_new_process(agent_factory, monkeypatch) -> None:
    thread = agent_factory().thread("environ")
    ev1, _, _ = await drain(thread.send("one [[say first]]"))
    ev2, _, _ = await drain(thread.send("two [[say second]]"))
    monkeypatch.setenv("ADAPTOR_NB_TEST_MARK", "changed")  # the CLI inherits it, so the kept process is not the same
    ev3, r3, err = await drain(thread.send("three [[say third]]"))
    [p1], [p3] = spawns(ev1), spawns(ev3)
    assert spawns(ev2) == [] and p3 != p1
    assert err is None and r3 is not None and r3.text == "third"


async def test_a_config_changed_in_place_between_sends_is_checked_and_launched_again(make_config, workspace) -> None:
    driver = claude.Driver(make_config())
    agent = Agent(driver, workspace=str(workspace))
    try:
        thread = agent.thread("in-place")
        ev1, _, _ = await drain(thread.send("one [[say first]]"))
        driver.config.allowed_tools.append("")  # a frozen Config's list, changed in place: invalid now
        ev2, _, err = await drain(thread.send("two [[say second]]"))
        assert isinstance(err, InvalidDriverConfigError) and err.option == "allowed_tools"
        assert spawns(ev2) == []
        driver.config.allowed_tools[-1] = "Read"  # valid again, and a different command line
        ev3, r3, err3 = await drain(thread.send("three [[say third]]"))
        [p1], [p3] = spawns(ev1), spawns(ev3)
        assert err3 is None and r3 is not None and r3.text == "third" and p3 != p1
    finally:
        await agent.close()


def test_a_script_whose_event_loop_ends_with_a_parked_thread_exits_and_kills_the_cli(
    make_config, workspace: Path
) -> None:
    cfg = make_config()
    fields = {k: getattr(cfg, k) for k in ("command", "cwd", "env", "secret_env", "bare", "startup_timeout")}
    script = ends_its_loop("claude")
    out = subprocess.run(
        [sys.executable, "-c", script, json.dumps(fields), str(workspace)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    pid_line, returned = out.stdout.split()
    assert returned == "returned"  # asyncio.run came back instead of waiting for the CLI for ever
    pid = int(pid_line)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
