"""The Claude process's stdin: lines reach the CLI whole and in order, written at once or by the writer task."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from adaptor_nb import Agent, AgentFailed
from adaptor_nb.driver._claude_family import EOF, LINES
from adaptor_nb.driver._claude_family import ClaudeFamilyProcess as ClaudeProcess
from adaptor_nb.drivers import claude
from adaptor_nb.drivers.claude._driver import PROFILE

# Reads stdin line by line after an optional go-ahead file appears, and answers each line with its length and tag.
ECHO = textwrap.dedent(
    """
    import json, os, sys, time
    gate = sys.argv[1]
    while gate and not os.path.exists(gate):
        time.sleep(0.01)
    for line in sys.stdin.buffer:
        obj = json.loads(line)
        print(json.dumps({"type": "echo", "tag": obj["tag"], "size": len(line)}), flush=True)
    """
)


async def _echoes(proc: ClaudeProcess, count: int) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    while len(seen) < count:
        item = await asyncio.wait_for(proc.inbox.get(), 30)
        assert item[0] != EOF, f"the CLI ended early: {proc.stderr_tail()}"
        if item[0] == LINES:
            seen += [f for f in item[2] if isinstance(f, dict)]
    return seen


async def _spawn(tmp_path: Path, gate: str) -> ClaudeProcess:
    script = tmp_path / "echo.py"
    script.write_text(ECHO)
    return await ClaudeProcess.spawn(
        [sys.executable, str(script), gate], profile=PROFILE, cwd=str(tmp_path), env=dict(os.environ), fingerprint=""
    )


async def test_lines_sent_one_after_another_arrive_whole_and_in_order(tmp_path: Path) -> None:
    proc = await _spawn(tmp_path, "")
    try:
        for i in range(20):
            proc.send({"tag": i, "pad": "x" * i})
        seen = await _echoes(proc, 20)
    finally:
        await proc.close(1.0)
    assert [e["tag"] for e in seen] == list(range(20))
    assert [e["size"] for e in seen] == [len(f'{{"tag":{i},"pad":"{"x" * i}"}}\n') for i in range(20)]


async def test_lines_behind_one_the_pipe_cannot_take_wait_for_it(tmp_path: Path) -> None:
    """A line larger than the pipe stays partly in the transport; later lines follow it, never cut into it."""
    gate = tmp_path / "go"
    proc = await _spawn(tmp_path, str(gate))
    big = "y" * (4 << 20)
    try:
        proc.send({"tag": 0, "pad": ""})
        proc.send({"tag": 1, "pad": big})  # the CLI is not reading yet: most of it waits in the transport
        for i in range(2, 6):
            proc.send({"tag": i, "pad": ""})
        await asyncio.sleep(0)
        gate.touch()
        seen = await _echoes(proc, 6)
    finally:
        await proc.close(1.0)
    assert [e["tag"] for e in seen] == list(range(6))
    assert seen[1]["size"] == len(big) + len('{"tag":1,"pad":""}\n')


async def test_a_line_sent_after_close_is_not_written(tmp_path: Path) -> None:
    proc = await _spawn(tmp_path, "")
    proc.send({"tag": 0, "pad": ""})
    assert [e["tag"] for e in await _echoes(proc, 1)] == [0]
    rc = await proc.close(1.0)
    proc.send({"tag": 1, "pad": ""})  # never blocks, never raises: the line is dropped with the closed stdin
    assert rc == 0


async def test_a_cli_that_writes_nothing_fails_at_the_startup_timeout(tmp_path: Path) -> None:
    timeout = 0.3
    script = tmp_path / "silent.py"
    script.write_text("import sys\nsys.stdin.read()\n")
    config = claude.Config(command=[sys.executable, str(script)], startup_timeout=timeout, grace_period=0.5)
    async with Agent(claude.Driver(config)) as agent:
        stream = agent.send("hello")
        with pytest.raises(AgentFailed) as caught:
            await stream.result()
    assert f"wrote nothing for {timeout:g} s (startup_timeout)" in caught.value.message
    assert caught.value.details["timeout"] == "startup_timeout"
