"""No descendant outlives close: a CLI that starts a daemon (double fork, ``setsid``, descriptors closed) on each
driver; the daemon is gone once the Agent is closed (Linux: the CLI runs under a subreaper supervisor)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from pathlib import Path

import psutil
import pytest

from adaptor_nb import Agent

from .frames import SEEDS
from .harness import DRIVERS, make_driver, prompt_for, run_turn

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the supervisor is Linux only")

TIMEOUT = 30.0
SEED = {"claude": 1, "codebuddy": 1, "codex": 0, "cursor": 1}  # recorded turns that end well


def _gone(pid: int) -> bool:
    with contextlib.suppress(psutil.NoSuchProcess):
        proc = psutil.Process(pid)
        with contextlib.suppress(psutil.TimeoutExpired):
            proc.wait(TIMEOUT)  # a bound for the test, never asserted on
        return proc.status() == psutil.STATUS_ZOMBIE
    return True


@pytest.mark.parametrize("name", DRIVERS)
async def test_a_daemon_the_cli_started_is_gone_after_close(tmp_path: Path, name: str) -> None:
    pid_file = tmp_path / "daemon.pid"
    prompt = prompt_for([json.dumps(f) for f in SEEDS[name][SEED[name]]], daemon=str(pid_file))
    daemon = 0
    try:
        async with Agent(make_driver(name, tmp_path, startup_timeout=TIMEOUT), workspace=str(tmp_path)) as agent:
            # A named Thread keeps a persistent CLI running after the turn: it is closed with the Agent.
            outcome = await run_turn(agent.thread("kept"), prompt, TIMEOUT)  # type: ignore[arg-type]
            assert outcome.kind == "ok", (outcome.kind, outcome.error)
            daemon = int(pid_file.read_text())
        assert _gone(daemon)
    finally:
        if daemon:
            with contextlib.suppress(ProcessLookupError):
                os.kill(daemon, signal.SIGKILL)
