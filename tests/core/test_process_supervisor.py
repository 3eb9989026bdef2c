"""The supervisor a CLI runs under on Linux: daemons end with the CLI, and the CLI looks as if started directly."""

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

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the supervisor is Linux only")

BOUND = 30.0  # a bound for the test itself, never asserted on

# Double fork, setsid, every descriptor let go: the daemon prints nothing; its pid goes to the file in argv[1].
_DAEMON = textwrap.dedent(
    """
    import os, sys, time
    if os.fork() == 0:
        os.setsid()
        r, w = os.pipe()
        if os.fork() == 0:
            os.write(w, str(os.getpid()).encode()); os.close(w)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2): os.dup2(null, fd)
            time.sleep(300)
            os._exit(0)
        os.close(w)
        open(sys.argv[1], "wb").write(os.read(r, 64))
        os._exit(0)
    os.wait()
    """
)


def _gone(pid: int) -> bool:
    with contextlib.suppress(psutil.NoSuchProcess):
        proc = psutil.Process(pid)
        with contextlib.suppress(psutil.TimeoutExpired):
            proc.wait(BOUND)
        return proc.status() == psutil.STATUS_ZOMBIE
    return True


def _daemon_cli(pid_file: str, then: str) -> list[str]:
    return ["sh", "-c", f'{sys.executable} -c "$0" {pid_file}; echo started; {then}', _DAEMON]


def _read_pid(pid_file: str) -> int:
    with open(pid_file) as fh:
        return int(fh.read())


async def _started(proc: CLIProcess, pid_file: str) -> int:
    assert await asyncio.wait_for(proc.readline(), BOUND) == b"started"
    return _read_pid(pid_file)


async def test_close_ends_a_daemon_that_left_the_group_and_its_pipes(tmp_path: object) -> None:
    pid_file = f"{tmp_path}/daemon.pid"
    proc = await CLIProcess.start(_daemon_cli(pid_file, "sleep 120"))
    daemon = 0
    try:
        daemon = await _started(proc, pid_file)
        assert psutil.Process(daemon).ppid() != proc.pid and os.getpgid(daemon) != os.getpgid(proc.pid)
        assert await proc.close(grace=0.1, term_wait=1) == -signal.SIGTERM  # as the CLI ended
        assert _gone(daemon)
    finally:
        if daemon:
            with contextlib.suppress(ProcessLookupError):
                os.kill(daemon, signal.SIGKILL)


async def test_a_daemon_ends_when_the_cli_exits_by_itself_and_the_exit_code_is_the_clis(tmp_path: object) -> None:
    pid_file = f"{tmp_path}/daemon.pid"
    proc = await CLIProcess.start(_daemon_cli(pid_file, "exit 4"), exit_grace=0.5)
    daemon = 0
    try:
        daemon = await _started(proc, pid_file)
        assert await asyncio.wait_for(proc.proc.wait(), BOUND) == 4
        assert _gone(daemon)
    finally:
        await proc.close(grace=0.1, term_wait=1)
        if daemon:
            with contextlib.suppress(ProcessLookupError):
                os.kill(daemon, signal.SIGKILL)


async def test_the_pid_is_the_clis_and_a_missing_cli_fails_as_if_started_directly() -> None:
    proc = await CLIProcess.start(["sh", "-c", "echo $$; exec sleep 120"])
    try:
        assert int(await asyncio.wait_for(proc.readline(), BOUND) or b"0") == proc.pid
    finally:
        await proc.close(grace=0.1, term_wait=1)
    with pytest.raises(FileNotFoundError) as caught:
        await CLIProcess.start(["/nonexistent/cli", "--flag"])
    assert caught.value.filename == "/nonexistent/cli"
