"""Faults on the real CodeBuddy Code CLI: a killed process, garbage and huge stdout lines, model HTTP errors.
Each ends with a clear outcome, the partial output, the stderr tail and no process left behind."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import psutil
import pytest
from _support import drain, of

from adaptor_nb import (
    Agent,
    AgentFailed,
    ApprovalMode,
    ApprovalPolicy,
    Notice,
    Policy,
    ProcessInfo,
    ProcessKind,
    ToolResult,
)
from adaptor_nb.testing import ChatReply, FakeChatCompletionsServer

from .conftest import DriverFactory

pytestmark = pytest.mark.codebuddy
AUTO = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_APPROVE))


def cli_pids() -> list[int]:
    return [p.pid for p in psutil.Process().children(recursive=True) if "codebuddy" in p.name()]


async def test_a_killed_cli_fails_the_run_with_partial_output_and_stderr_tail(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    gate = fake.hold("never")
    fake.enqueue(
        ChatReply.tool("Bash", {"command": "echo partial-output", "description": "echo"}),
        ChatReply.text("unreachable", hold=gate),
    )
    async with Agent(make_driver(), workspace=str(workspace), policy=AUTO) as agent:
        stream = agent.send("work")
        consumer = asyncio.create_task(drain(stream))
        await asyncio.to_thread(fake.wait_for_requests, 2)
        (pid,) = cli_pids()
        os.kill(pid, signal.SIGKILL)
        events, result, error = await consumer
    assert result is None and isinstance(error, AgentFailed)
    assert "exited with code" in error.message
    assert error.details["exit_code"] == -signal.SIGKILL
    assert isinstance(error.details["stderr_tail"], str)
    assert error.result is not None
    assert any("partial-output" in str(r.result) for r in of(events, ToolResult))
    exits = [e for e in of(events, ProcessInfo) if e.kind is ProcessKind.EXIT]
    assert [e.data["returncode"] for e in exits] == [-signal.SIGKILL]


async def test_a_garbage_stdout_line_becomes_a_notice_and_the_run_goes_on(
    make_driver: DriverFactory, codebuddy_bin: str, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    noisy = ["/bin/sh", "-c", 'printf "this is not json\\n"; exec "$0" "$@"', codebuddy_bin]
    async with Agent(make_driver(command=noisy), workspace=str(workspace)) as agent:
        events, result, error = await drain(agent.send("[[say still fine]]"))
    assert error is None and result is not None and result.text == "still fine"
    assert [n for n in of(events, Notice) if n.metadata.get("code") == "codebuddy.protocol_error"]
    raw = [e for e in of(events, ProcessInfo) if e.kind is ProcessKind.STDOUT]
    assert [e.text for e in raw] == ["this is not json"]


async def test_a_5_mb_stdout_line_is_read_whole(
    make_driver: DriverFactory, codebuddy_bin: str, fake: FakeChatCompletionsServer, workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "big_line_then_cli.py"
    script.write_text(
        "import os, sys\n"
        'sys.stdout.write(\'{"type":"huge_line","pad":"\' + \'a\' * 5_000_000 + \'"}\\n\')\n'
        "sys.stdout.flush()\n"
        "os.execv(sys.argv[1], sys.argv[1:])\n"
    )
    command = [sys.executable, str(script), codebuddy_bin]
    async with Agent(make_driver(command=command), workspace=str(workspace)) as agent:
        events, result, error = await drain(agent.send("[[say after the big line]]"))
    assert error is None and result is not None and result.text == "after the big line"
    (notice,) = [n for n in of(events, Notice) if n.metadata.get("code") == "codebuddy.unknown_frame"]
    assert len(notice.data["frame"]["pad"]) == 5_000_000


@pytest.mark.parametrize(("status", "category"), [(500, "model_service"), (503, "network")])
async def test_a_model_http_error_fails_the_run_with_the_cli_error_details(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path, status: int, category: str
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        _, result, error = await drain(agent.send(f"[[status {status}]]"))
    assert result is None and isinstance(error, AgentFailed)
    assert error.details["api_error_status"] == status
    assert error.details["errors_info"][0]["category"] == category
    assert "stderr_tail" in error.details
    assert len(fake.model_requests) == 1  # CODEBUDDY_MAX_RETRIES=0
    assert cli_pids() == []
