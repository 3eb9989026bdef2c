"""Faults on the real Codex CLI: a killed process, a garbage line, model errors, a cut stream, cancellation and
timeouts. Each ends with a clear outcome, the partial output, the stderr tail and no process left behind."""

from __future__ import annotations

import os
import select
import signal
from pathlib import Path

import pytest

from adaptor_nb import Agent, AgentFailed, FailureReason, Notice, ProcessInfo, ProcessKind, RunCancelled, ToolResult
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._openai import Reply

from .conftest import DriverFactory
from .helpers import Watcher, alive, of, run_all, spawned_pids

pytestmark = pytest.mark.codex


def wait_for_exit(pid: int) -> None:
    """Block until ``pid`` has exited, without reaping it (its parent's wait() still gets the status)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return  # already exited and reaped by its parent
    try:
        ready, _, _ = select.select([fd], [], [], 10)
        assert ready, f"process {pid} did not exit"
    finally:
        os.close(fd)


async def test_a_killed_app_server_fails_the_run_with_partial_output(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    gate = fake.hold("never")
    fake.enqueue(Reply.exec_command("echo partial-output"), Reply.text("unreachable", hold=gate))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        stream = agent.send("work")
        watch = Watcher(stream)
        spawn = await watch.wait_for(lambda e: isinstance(e, ProcessInfo))
        await fake.model_request(2)
        assert isinstance(spawn, ProcessInfo)
        os.kill(int(spawn.data["pid"]), signal.SIGKILL)
        events, _, error = await watch.finish()
    assert isinstance(error, AgentFailed)
    assert "exited during a turn" in error.message
    assert error.details["exit_code"] == -signal.SIGKILL
    exits = [e.data for e in of(events, ProcessInfo) if e.kind is ProcessKind.EXIT]
    assert exits == [{"returncode": -signal.SIGKILL, "pid": int(spawn.data["pid"])}]
    assert isinstance(error.details["stderr_tail"], str)
    assert error.result is not None
    (tool_result,) = of(events, ToolResult)
    assert tool_result.result["output"] == "partial-output\n"
    assert [i.kind for i in error.result.transcript()] == ["tool_use", "tool_result"]


async def test_a_garbage_line_becomes_a_notice_and_the_run_goes_on(
    make_driver: DriverFactory, codex_bin: str, fake: FakeOpenAIServer, workspace: Path
) -> None:
    noisy = ["/bin/sh", "-c", 'printf "this is not json-rpc\\n"; exec "$0" "$@"', codex_bin]
    async with Agent(make_driver(command=noisy), workspace=str(workspace)) as agent:
        events, result, error = await run_all(agent.send("hi [[say still fine]]"))
    assert error is None and result is not None
    assert result.text == "still fine"
    (notice,) = [n for n in of(events, Notice) if n.metadata.get("code") == "codex_unparseable_line"]
    assert notice.data["line"] == "this is not json-rpc"
    (raw_line,) = [e for e in of(events, ProcessInfo) if e.kind is ProcessKind.STDOUT]
    assert (raw_line.text, raw_line.data) == ("this is not json-rpc", {"json": False})


async def test_a_model_error_without_retries_fails_the_run_clearly(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        events, _, error = await run_all(agent.send("x [[status 500]]"))
        assert not any(alive(pid) for pid in spawned_pids(events))
    assert isinstance(error, AgentFailed)
    assert error.message.startswith("the Codex turn failed:")
    assert error.details["codex_error"] == "internalServerError"
    assert error.details["retryable"] is True
    assert "stderr_tail" in error.details
    assert len(fake.model_requests) == 1


async def test_a_stream_without_response_completed_fails_with_the_partial_text(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        _, _, error = await run_all(agent.send("x [[incomplete half an answer]]"))
    assert isinstance(error, AgentFailed)
    assert "stream disconnected before completion" in error.message
    assert error.result is not None
    assert error.result.text == "half an answer"


async def test_cancel_stops_the_run_and_reaps_the_process(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        stream = agent.thread("t").send("[[hold never]]")
        watch = Watcher(stream)
        spawn = await watch.wait_for(lambda e: isinstance(e, ProcessInfo))
        await fake.model_request(1)
        stream.cancel()
        _events, _, error = await watch.finish()
        assert isinstance(error, RunCancelled)
        assert isinstance(spawn, ProcessInfo)
        assert not alive(int(spawn.data["pid"]))


async def test_a_timeout_cancels_and_reaps_the_process(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        events, _, error = await run_all(agent.send("[[hold never]]", timeout=3))
        assert isinstance(error, RunCancelled)
        assert "timed out" in str(error)
        assert not any(alive(pid) for pid in spawned_pids(events))


async def test_a_cli_that_dies_at_start_up_fails_with_its_stderr(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    broken = ["/bin/sh", "-c", 'echo "fatal: cannot start" >&2; exit 3']
    async with Agent(make_driver(command=broken), workspace=str(workspace)) as agent:
        _, _, error = await run_all(agent.send("hi"))
    assert isinstance(error, AgentFailed)
    assert error.message == "codex app-server exited during start-up (exit code 3)"
    assert "fatal: cannot start" in error.details["stderr_tail"]
    assert fake.model_requests == []


async def test_a_parked_process_that_died_is_replaced_and_the_thread_resumed(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        thread = agent.thread("t")
        first, r1, _ = await run_all(thread.send("one [[say first]]"))
        (pid,) = spawned_pids(first)
        os.kill(pid, signal.SIGKILL)
        wait_for_exit(pid)
        second, r2, error = await run_all(thread.send("two [[say second]]"))
    assert error is None and r1 is not None and r2 is not None
    assert len(spawned_pids(second)) == 1 and spawned_pids(second) != [pid]
    assert r2.metadata["thread_id"] == r1.metadata["thread_id"]
    assert fake.model_requests[-1].user_texts() == ["one [[say first]]", "two [[say second]]"]


async def test_an_idle_app_server_fails_the_turn_after_idle_timeout(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(idle_timeout=1.0), workspace=str(workspace)) as agent:
        events, _, error = await run_all(agent.send("[[hold never]]"))
        assert not any(alive(pid) for pid in spawned_pids(events))
    assert isinstance(error, AgentFailed)
    assert "sent nothing for 1 s" in error.message


async def test_a_cli_that_never_answers_initialize_times_out_and_is_reaped(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    silent = ["/bin/sh", "-c", "sleep 60"]
    async with Agent(make_driver(command=silent, startup_timeout=0.5), workspace=str(workspace)) as agent:
        _, _, error = await run_all(agent.send("hi"))
    assert isinstance(error, AgentFailed)
    assert "did not answer initialize within 0.5 s" in error.message


async def test_an_app_server_that_cannot_be_started_is_an_infrastructure_failure_with_its_cause(
    make_driver: DriverFactory, workspace: Path, tmp_path: Path
) -> None:
    gone = tmp_path / "codex"
    gone.write_text("#!/no/such/interpreter\n")  # an executable file whose exec fails (ENOENT)
    gone.chmod(0o755)
    async with Agent(make_driver(command=[str(gone)]), workspace=str(workspace)) as agent:
        _events, _result, error = await run_all(agent.send("work"))
    assert isinstance(error, AgentFailed)
    assert error.reason is FailureReason.INFRASTRUCTURE and isinstance(error.cause, OSError)
