"""A KeyboardInterrupt during a synchronous call (Thread.run_sync, Agent.run_sync, adaptor_nb.run_sync) cancels the
call's run and leaves the Thread free for the next call, in a plain script (a real SIGINT, no event loop)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    import adaptor_nb
    from adaptor_nb import Agent, RunCancelled
    from adaptor_nb.drivers import reference
    from adaptor_nb.drivers.reference import Delay, Turn, scenario

    driver = reference.Driver(reference.Config(scenario=scenario(Turn("working", Delay(3600)))))
    agent = Agent(driver)
    thread = agent.thread("t")
    seen = []

    def interrupt_when_running():
        while not agent.active:
            time.sleep(0.01)
        seen.extend(agent.active)
        os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C does

    threading.Thread(target=interrupt_when_running, daemon=True).start()
    call = {
        "thread": lambda: thread.run_sync("go"),
        "agent": lambda: agent.run_sync("go"),
        "run_sync": lambda: adaptor_nb.run_sync(lambda: thread.send("go").result()),
    }[sys.argv[1]]
    try:
        call()
    except KeyboardInterrupt:
        print("interrupted")
    print("active after the interrupt:", len(agent.active))
    try:
        adaptor_nb.run_sync(seen[0].result())
    except RunCancelled:
        print("the interrupted run ended: RunCancelled")
    driver.config = reference.Config()  # the next run answers at once
    print("next run on the thread:", thread.run_sync("again", timeout=60).text.split("You said")[1])
    """
)


@pytest.mark.parametrize("how", ["thread", "agent", "run_sync"])
def test_an_interrupt_cancels_the_calls_run_and_frees_the_thread(how: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, how], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "interrupted",
        "active after the interrupt: 0",
        "the interrupted run ended: RunCancelled",
        "next run on the thread: : “again”.",
    ]
