"""Fault paths on the real CLI: each ends promptly with a clear outcome, partial output and no stray process."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading

import pytest

from adaptor_nb import (
    AgentFailed,
    LimitExceeded,
    Notice,
    ProcessInfo,
    ProcessKind,
    RunCancelled,
    TextDelta,
)
from adaptor_nb.testing._anthropic import FakeAnthropicServer, Reply

from .conftest import FAULT_CLI
from .helpers import drain, of, outcome

pytestmark = pytest.mark.claude


def spawn_pid(events: list) -> int:
    return next(p.data["pid"] for p in of(events, ProcessInfo) if p.kind is ProcessKind.SPAWN)


async def test_cli_killed_mid_turn_fails_with_partial_text(agent_factory, fake: FakeAnthropicServer) -> None:
    gate = threading.Event()
    fake.enqueue(Reply.text("partial answer and more", chunks=3, hold=gate))
    stream = agent_factory().send("go")
    events = []
    try:
        async for ev in stream.events():
            events.append(ev)
            if isinstance(ev, TextDelta) and ev.text:
                os.kill(spawn_pid(events), signal.SIGKILL)
        _, err = await outcome(stream)
    finally:
        gate.set()
    assert isinstance(err, AgentFailed)
    assert "exited with code -9" in err.message
    assert err.details["exit_code"] == -9 and "stderr_tail" in err.details
    assert err.result is not None and err.result.text.startswith("partial")
    assert [p for p in of(events, ProcessInfo) if p.kind is ProcessKind.EXIT]


async def test_exit_without_a_result_carries_the_stderr_tail(agent_factory, make_config, claude_cli) -> None:
    agent = agent_factory(make_config(command=[sys.executable, FAULT_CLI, "exit", claude_cli]))
    _events, result, err = await drain(agent.send("hello"))
    assert isinstance(err, AgentFailed) and result is None
    assert err.details["exit_code"] == 3
    assert "the CLI died unexpectedly" in err.details["stderr_tail"]
    assert "the CLI died unexpectedly" in err.message
    assert err.result is not None and b"init" in err.result.raw().stdout


async def test_a_line_that_is_not_json_is_reported_and_skipped(agent_factory, make_config, claude_cli) -> None:
    agent = agent_factory(make_config(command=[sys.executable, FAULT_CLI, "nonjson", claude_cli]))
    thread = agent.thread("noisy")
    events, result, err = await drain(thread.send("hello [[say still fine]]"))
    assert err is None and result is not None and result.text == "still fine"
    assert [n for n in of(events, Notice) if n.metadata.get("code") == "claude.protocol_error"]
    stdout = [p for p in of(events, ProcessInfo) if p.kind is ProcessKind.STDOUT]
    assert stdout and stdout[0].text == "this line is not JSON at all"
    # A protocol-invalid run never becomes the thread's resume point.
    assert await thread.checkpoint() is None


async def test_a_5mb_stdout_line_is_read_whole(agent_factory) -> None:
    _events, result, err = await drain(agent_factory().send("big [[big 5000000]]"))
    assert err is None and result is not None
    assert len(result.text) == 5_000_000
    longest = max(len(line) for line in result.raw().stdout.splitlines())
    assert longest > 5_000_000


async def test_stderr_noise_is_captured_and_the_run_succeeds(agent_factory, make_config, claude_cli) -> None:
    agent = agent_factory(make_config(command=[sys.executable, FAULT_CLI, "stderr", claude_cli]))
    events, result, err = await drain(agent.send("hi [[say quiet]]"))
    assert err is None and result is not None and result.text == "quiet"
    stderr = b"".join(p.bytes for p in of(events, ProcessInfo) if p.kind is ProcessKind.STDERR)
    assert b"noise line 299" in stderr
    assert b"noise line 0:" in result.raw().stderr


@pytest.mark.parametrize(("status", "retryable"), [(500, True), (529, True), (429, True), (400, False)])
async def test_model_errors_fail_with_the_status(agent_factory, fake: FakeAnthropicServer, status, retryable) -> None:
    fake.enqueue(Reply.error(status, f"upstream says {status}"))
    _events, _result, err = await drain(agent_factory().send("x"))
    assert isinstance(err, AgentFailed)
    assert err.details["api_error_status"] == status
    assert bool(err.details.get("retryable")) is retryable
    assert f"upstream says {status}" in err.message
    assert "stderr_tail" in err.details
    assert len(fake.message_requests) == 1  # CLAUDE_CODE_MAX_RETRIES=0: no retry


async def test_a_cut_off_model_stream_fails_cleanly(agent_factory) -> None:
    _events, _result, err = await drain(agent_factory().send("cut [[cut]]"))
    assert isinstance(err, AgentFailed)
    assert err.result is not None


async def test_step_limit_of_the_cli_is_limit_exceeded(agent_factory, make_config, workspace) -> None:
    (workspace / "f").write_text("x")
    read = json.dumps({"file_path": str(workspace / "f")})
    agent = agent_factory(make_config(max_turns_per_run=1))
    _events, _result, err = await drain(agent.send(f"loop [[tool Read {read}]] [[tool Read {read}]]"))
    assert isinstance(err, LimitExceeded)
    assert "maximum number of turns" in err.message


async def test_timeout_cancels_and_reaps(agent_factory) -> None:
    _events, _result, err = await drain(agent_factory().send("slow [[sleep 20]]", timeout=2))
    assert isinstance(err, RunCancelled)


async def test_cancel_on_a_thread_settles_its_process_for_the_next_send(agent_factory, fake) -> None:
    gate = threading.Event()
    fake.enqueue(Reply.text("never finished", chunks=3, hold=gate))
    thread = agent_factory().thread("c")
    stream = thread.send("go")
    try:
        async for ev in stream.events():
            if isinstance(ev, TextDelta) and ev.text:
                stream.cancel()
        _, err = await outcome(stream)
    finally:
        gate.set()
    assert isinstance(err, RunCancelled)
    _events, result, err = await drain(thread.send("again [[say back]]"))
    assert err is None and result is not None and result.text == "back"


async def test_an_api_retry_is_reported_as_a_notice(agent_factory, make_config, fake: FakeAnthropicServer) -> None:
    fake.enqueue(Reply.error(529, "busy for a moment"))
    agent = agent_factory(make_config(env={"CLAUDE_CODE_MAX_RETRIES": "1"}))
    events, result, err = await drain(agent.send("retry me [[say recovered]]"))
    assert err is None and result is not None and result.text == "recovered"
    [retry] = [n for n in of(events, Notice) if n.metadata.get("code") == "claude.api_retry"]
    assert retry.data["error_status"] == 529 and retry.data["attempt"] == 1
    assert len(fake.message_requests) == 2
