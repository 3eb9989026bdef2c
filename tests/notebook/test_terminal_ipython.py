"""Ctrl-C during an ``%%agent`` cell in terminal IPython (not a kernel): the run is cancelled, its CLI stopped, the
prompt returns, and the next cell on the same thread runs.

Terminal IPython runs each awaiting cell with ``run_until_complete`` on its own loop and nothing runs that loop
between cells, so a KeyboardInterrupt raised inside the loop's ``select`` would leave the run pending: its CLI
alive and its Thread busy (ThreadBusyError) for every later cell. The test drives a real ``ipython`` in a
pseudo-terminal with a stand-in Claude CLI whose turn blocks, and sends the Ctrl-C byte.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import psutil
import pytest

pexpect = pytest.importorskip("pexpect")

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "tests" / "fixtures" / "waiting_cli.py"
IPYTHON = Path(sys.executable).with_name("ipython")
CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")  # cursor, colour and title sequences
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"  # a bracketed paste: a multi-line cell entered as one


class Terminal:
    """``ipython`` in a pseudo-terminal, one cell at a time."""

    def __init__(self, home: Path, piddir: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(home), "TERM": "xterm", "STANDIN_PIDS": str(piddir)}
        env.pop("ADAPTOR_NB_DRIVER", None)
        env["ANTHROPIC_API_KEY"] = "sk-ant-standin"  # the credentials check before launch; the stand-in reads none
        argv = ["--no-banner", "--colors=NoColor", "--HistoryManager.enabled=False", "--no-confirm-exit"]
        self.child = pexpect.spawn(
            str(IPYTHON), argv, env=env, cwd=str(home), encoding="utf-8", timeout=60, dimensions=(50, 400)
        )
        self.count = 1
        self.prompt()

    def prompt(self) -> str:
        """Wait for the prompt ``In [count]:`` and return what came before it, without control sequences."""
        self.child.expect(rf"In \[{self.count}\]:")
        return CONTROL.sub("", str(self.child.before))

    def enter(self, cell: str) -> None:
        # A cell magic is complete at a blank line after its body, as for any %% cell in IPython: Enter three times.
        self.child.send(PASTE_START + cell + PASTE_END + ("\r\r\r" if cell.startswith("%%") else "\r"))
        self.count += 1

    def run(self, cell: str) -> str:
        """Run ``cell`` and return its output."""
        self.enter(cell)
        return self.prompt()

    def exit(self) -> bool:
        """Ctrl-D at an empty prompt; whether ipython exited within 30 s."""
        self.child.send("\x04")
        return self.child.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=30) == 0

    def kill(self) -> None:
        """End ipython whatever its state (after a failure) and release the terminal."""
        if self.child.isalive():
            self.child.terminate(force=True)
        self.child.close()


def _running(piddir: Path) -> list[psutil.Process]:
    out = []
    for name in os.listdir(piddir):
        if name.isdigit():
            try:
                proc = psutil.Process(int(name))
                if proc.status() != psutil.STATUS_ZOMBIE:
                    out.append(proc)
            except psutil.NoSuchProcess:
                pass
    return out


def _blocked(piddir: Path, count: int = 1) -> bool:
    """Whether ``count`` stand-in CLIs are inside their blocking turn (another process's files: polled until they
    appear)."""
    deadline = time.monotonic() + 60
    while sum(name.endswith(".waiting") for name in os.listdir(piddir)) < count:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_ctrl_c_cancels_the_cell_stops_the_cli_and_frees_the_thread(tmp_path: Path) -> None:
    piddir = tmp_path / "pids"
    piddir.mkdir()
    term = Terminal(tmp_path, piddir)
    try:
        term.run("%load_ext adaptor_nb")
        config = f"command=[sys.executable, {str(CLI)!r}], grace_period=0.5, env={{'STANDIN_PIDS': {str(piddir)!r}}}"
        term.run(
            "import sys; from adaptor_nb import Agent; from adaptor_nb.drivers import claude; "
            f"a = Agent(claude.Driver(claude.Config({config})), workspace={str(tmp_path)!r})"
        )
        term.enter("%%agent --agent a --thread t\nWAIT for ever")
        assert _blocked(piddir), "the stand-in CLI never reached its blocking turn"
        blocked = _running(piddir)
        assert len(blocked) == 1
        term.child.sendintr()  # the Ctrl-C byte: the terminal sends SIGINT to ipython
        out = term.prompt()  # the prompt returns
        assert "KeyboardInterrupt: the %%agent run was interrupted" in out, out
        _gone, alive = psutil.wait_procs(blocked, timeout=5)
        assert not alive, f"the CLI of the interrupted run is still running: {alive}"
        out = term.run("%%agent --agent a --thread t\nhello again")
        assert "ThreadBusyError" not in out, out
        out = term.run("print('next run:', _agent.text)")
        assert "next run: done" in out, out
        assert term.exit(), "ipython did not exit at Ctrl-D"
    finally:
        term.kill()
        for proc in _running(piddir):
            proc.kill()


def test_ctrl_c_cancels_a_map_cell_stops_every_cli_and_keeps_the_partial_frame(tmp_path: Path) -> None:
    piddir = tmp_path / "pids"
    piddir.mkdir()
    term = Terminal(tmp_path, piddir)
    try:
        term.run("%load_ext adaptor_nb")
        config = f"command=[sys.executable, {str(CLI)!r}], grace_period=0.5, env={{'STANDIN_PIDS': {str(piddir)!r}}}"
        term.run(
            "import sys; import pandas as pd; from adaptor_nb import Agent; from adaptor_nb.drivers import claude; "
            f"a = Agent(claude.Driver(claude.Config({config})), workspace={str(tmp_path)!r}); "
            "rows = pd.DataFrame({'body': ['WAIT', 'WAIT']})"
        )
        term.enter("%%agent --agent a --map rows --thread row{index} --concurrency 2\n{body}")
        assert _blocked(piddir, 2), f"{len(_running(piddir))} stand-in CLIs started, not 2 in their blocking turn"
        blocked = _running(piddir)
        assert len(blocked) == 2
        term.child.sendintr()
        out = term.prompt()
        assert "KeyboardInterrupt: the %%agent --map batch was cancelled" in out, out
        _gone, alive = psutil.wait_procs(blocked, timeout=5)
        assert not alive, f"CLIs of the interrupted batch are still running: {alive}"
        out = term.run("print('partial:', len(_agent))")
        assert "partial: 2" in out, out
        term.run("%%agent --agent a --map rows --thread row{index} --concurrency 2\nhello")
        out = term.run("print('next batch:', list(_agent['_status']))")
        assert "next batch: ['ok', 'ok']" in out, out
        assert term.exit(), "ipython did not exit at Ctrl-D"
    finally:
        term.kill()
        for proc in _running(piddir):
            proc.kill()
