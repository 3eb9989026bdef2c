"""CLIs that misbehave around their pipes and descendants: every wait ends and nothing they start outlives them."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import textwrap

import psutil
import pytest

from adaptor_nb.driver import CLIProcess

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses setsid and /proc")

# A bound for the test itself, never asserted on: a hang fails the test instead of stalling the suite.
BOUND = 30.0

# A grandchild that leaves the process group, reports its pid, and optionally lets go of its pipes.
_GRANDCHILD = textwrap.dedent(
    """
    import os, sys, time
    os.setsid()
    print(os.getpid(), flush=True)
    if len(sys.argv) > 1:  # detach; the script has no quotes, so it survives nested shell quoting
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
    time.sleep(120)
    """
)


def _grandchild(*, detach: bool) -> str:
    return f"{sys.executable} -c '{_GRANDCHILD}'" + (" detach" if detach else "")


def _gone(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


def _wait_gone(pid: int) -> bool:
    with contextlib.suppress(psutil.NoSuchProcess):
        psutil.wait_procs([psutil.Process(pid)], timeout=BOUND)
    return _gone(pid)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


async def _all_lines(proc: CLIProcess) -> list[bytes]:
    async def read() -> list[bytes]:
        return [line async for line in proc.lines()]

    return await asyncio.wait_for(read(), BOUND)


async def test_a_cli_that_closes_stdout_but_keeps_running_is_stopped() -> None:
    proc = await CLIProcess.start(["sh", "-c", "echo hi; exec 1>&-; exec sleep 120"], exit_grace=0.2)
    try:
        assert await _all_lines(proc) == [b"hi"]
        # Plain asyncio would wait for this exit forever; the process is stopped after its exit grace.
        assert await asyncio.wait_for(proc.proc.wait(), BOUND) == -signal.SIGTERM
    finally:
        await proc.close(grace=0.1, term_wait=1)


async def test_a_cli_that_exits_while_a_grandchild_holds_stdout_ends_with_its_own_exit_code() -> None:
    proc = await CLIProcess.start(["sh", "-c", f"{_grandchild(detach=False)} & read _ ; exit 3"], exit_grace=0.2)
    grandchild = 0
    try:
        line = await asyncio.wait_for(proc.readline(), BOUND)
        assert line is not None
        grandchild = int(line)
        assert os.getpgid(grandchild) != proc.pid  # it left the process group
        await proc.write(b"go\n")
        assert await _all_lines(proc) == []  # EOF arrives: the holder of the pipe was killed
        assert await asyncio.wait_for(proc.proc.wait(), BOUND) == 3
        assert _wait_gone(grandchild)
    finally:
        await proc.close(grace=0.1, term_wait=1)
        if grandchild:
            _kill(grandchild)


async def test_close_kills_a_grandchild_that_left_the_group_and_its_pipes() -> None:
    proc = await CLIProcess.start(["sh", "-c", f"{_grandchild(detach=True)} & sleep 120"])
    grandchild = 0
    try:
        line = await asyncio.wait_for(proc.readline(), BOUND)
        assert line is not None
        grandchild = int(line)
        assert os.getpgid(grandchild) != proc.pid
        await proc.close(grace=0.1, term_wait=1)
        assert proc.returncode is not None
        assert _wait_gone(grandchild)
    finally:
        await proc.close(grace=0.1, term_wait=1)
        if grandchild:
            _kill(grandchild)


async def test_close_kills_an_orphaned_grandchild_that_holds_a_pipe() -> None:
    # The grandchild's parent exits at once, so it is re-parented away from the CLI; it still holds stdout.
    script = f'sh -c "{_grandchild(detach=False)} &"; sleep 120'
    proc = await CLIProcess.start(["sh", "-c", script])
    grandchild = 0
    try:
        line = await asyncio.wait_for(proc.readline(), BOUND)
        assert line is not None
        grandchild = int(line)
        assert grandchild not in {c.pid for c in psutil.Process(proc.pid).children(recursive=True)}
        await proc.close(grace=0.1, term_wait=1)
        assert proc.returncode == -signal.SIGTERM
        assert _wait_gone(grandchild)
    finally:
        await proc.close(grace=0.1, term_wait=1)
        if grandchild:
            _kill(grandchild)


async def test_a_well_behaved_cli_is_untouched() -> None:
    proc = await CLIProcess.start(["sh", "-c", "echo one; echo two; exit 5"], exit_grace=0.2)
    assert await _all_lines(proc) == [b"one", b"two"]
    assert await asyncio.wait_for(proc.proc.wait(), BOUND) == 5
    assert await proc.close(grace=1, term_wait=1) == 5
