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


BATCH_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    import pandas as pd, psutil
    import adaptor_nb
    from adaptor_nb import Agent
    from adaptor_nb.drivers import claude

    cli, piddir, home = sys.argv[1:4]
    config = claude.Config(
        command=[sys.executable, cli], grace_period=0.5, env={"HOME": home, "STANDIN_PIDS": piddir}
    )
    agent = Agent(claude.Driver(config), workspace=home)

    def files(suffix):
        return [f for f in os.listdir(piddir) if f.endswith(suffix)]

    def interrupt_when_blocked():
        while len(files(".waiting")) < 2:  # two rows run (concurrency=2), the third waits for a slot
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C does

    def alive(pid):
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    threading.Thread(target=interrupt_when_blocked, daemon=True).start()
    rows = pd.DataFrame({"id": [0, 1, 2], "body": ["WAIT"] * 3})
    try:
        adaptor_nb.map_rows_sync(agent, rows, "{body}", thread="t{id}", concurrency=2, progress=False)
    except KeyboardInterrupt:
        print("interrupted")
    print("active after the interrupt:", len(agent.active))
    started = [int(f) for f in files("") if f.isdigit()]
    print("CLIs started:", len(started), "still running:", sum(alive(pid) for pid in started))
    again = adaptor_nb.map_rows_sync(
        agent, rows.assign(body="hello"), "{body}", thread="t{id}", concurrency=2, progress=False
    )
    print("next batch on the same threads:", list(again["_status"]))
    print("next run on thread t0:", agent.thread("t0").run_sync("again", timeout=60).text)
    """
)


def test_an_interrupt_of_map_rows_sync_cancels_every_row_and_stops_every_cli(tmp_path: Path) -> None:
    """A KeyboardInterrupt during a batch in a plain script: every row's run ends, every CLI process is gone, and
    the rows' Threads take the next batch and the next run."""
    cli = ROOT / "tests" / "fixtures" / "waiting_cli.py"
    piddir = tmp_path / "pids"
    piddir.mkdir()
    # the stand-in reads no key; map_rows checks that the driver has credentials before any row starts
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ANTHROPIC_API_KEY": "sk-ant-standin"}
    argv = [sys.executable, "-c", BATCH_SCRIPT, str(cli), str(piddir), str(tmp_path)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "interrupted",
        "active after the interrupt: 0",
        "CLIs started: 2 still running: 0",
        "next batch on the same threads: ['ok', 'ok', 'ok']",
        "next run on thread t0: done",
    ]
