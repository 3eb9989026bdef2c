"""Cancel and close during start-up: a CLI that never finishes starting (and ignores SIGTERM, with a child of its
own) must not hold a run or an Agent for the start-up timeout.

``cancel()`` must end the run promptly with RunCancelled, and ``Agent.close()`` must return only once the CLI and
its child are gone. The bounds below are generous limits, far below the 120 s start-up timeout, not measurements.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import psutil
import pytest

from adaptor_nb import Agent, Done, RunCancelled

from .harness import DRIVERS, make_driver

STARTUP_TIMEOUT = 120.0
BOUND = 30.0  # far below STARTUP_TIMEOUT: an end within it was not the start-up timeout's
HANG = """
import os, signal, subprocess, sys, time
if sys.argv[2] == "start" and "--version" in sys.argv:
    print("99.0.0 (stand-in)")
    sys.exit(0)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
sleeper = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
child = subprocess.Popen([sys.executable, "-c", sleeper])
with open(sys.argv[1] + ".tmp", "w") as fh:
    fh.write(f"{os.getpid()} {child.pid}")
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(600)
"""


def _gone(pids: list[int]) -> bool:
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                return False
        except psutil.NoSuchProcess:
            continue
    return True


def _pids(path: Path) -> list[int]:
    return [int(p) for p in path.read_text().split()]


@pytest.mark.parametrize("name", DRIVERS)
@pytest.mark.parametrize("how", ["cancel", "close"])
@pytest.mark.parametrize("phase", ["probe", "start"])
async def test_a_cli_that_never_starts_is_cancelled_and_closed_promptly(
    tmp_path: Path, name: str, how: str, phase: str
) -> None:
    """``probe``: the CLI hangs when asked its version (before the driver runs); ``start``: it answers that and
    hangs when started for the run (before it answers initialize, or writes anything)."""
    script = tmp_path / "hang.py"
    script.write_text(HANG)
    pids = tmp_path / "pids"
    driver = make_driver(
        name,
        tmp_path,
        command=[sys.executable, "-S", str(script), str(pids), phase],
        startup_timeout=STARTUP_TIMEOUT,
        grace_period=0.5,
    )
    agent = Agent(driver, workspace=str(tmp_path))
    closed = False
    try:
        stream = agent.send("hello", timeout=STARTUP_TIMEOUT * 2)
        events = stream.events()
        async with asyncio.timeout(BOUND):
            while not pids.exists():  # noqa: ASYNC110 - another process's file: polled until it appears
                await asyncio.sleep(0.05)
        if how == "cancel":
            stream.cancel()
            async with asyncio.timeout(BOUND):
                rest = [e async for e in events]
            dones = [e for e in rest if isinstance(e, Done)]
            assert len(dones) == 1 and isinstance(dones[0].err, RunCancelled), rest[-3:]
        async with asyncio.timeout(BOUND):
            await agent.close()
        closed = True
        assert _gone(_pids(pids)), [p for p in _pids(pids) if psutil.pid_exists(p)]
    finally:
        if not closed:
            await agent.close()
        for pid in _pids(pids) if pids.exists() else []:
            try:
                psutil.Process(pid).kill()
            except psutil.NoSuchProcess:
                pass
