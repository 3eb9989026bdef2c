"""The supervisor a CLI runs under on Linux: no descendant outlives it, daemons included.

``CLIProcess.start`` runs ``python -I -S _supervisor.py REPORT_FD GRACE -- ARGV...`` as the leader of the CLI's
process group. The supervisor makes itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``), so a process the
CLI starts that double-forks and calls ``setsid`` is re-parented to the supervisor instead of to init, and stays a
descendant that can be found and ended. It starts ARGV (the CLI keeps the supervisor's stdin, stdout, stderr and
process group; the supervisor lets go of its own copies of the pipes), writes ``P<pid>`` (or ``E<errno>`` when ARGV
cannot be started) to REPORT_FD, and reaps every child that ends.

When the CLI exits, or the supervisor is told to stop (SIGTERM or SIGHUP: the group's stop, or the parent's death),
every remaining descendant gets SIGTERM, and SIGKILL after GRACE seconds; then the supervisor ends as the CLI did
(the same exit code, or death by the same signal). SIGINT is the CLI's to handle. Only the standard library is used
and nothing of adaptor_nb is imported: the script starts in a few milliseconds.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
_POLL = 0.02


def become_subreaper() -> bool:
    """Make this process a child subreaper that gets SIGTERM when its parent dies; False where that fails."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        ok = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return False
    return bool(ok)


def descendants(root: int) -> list[int]:
    """Every living process below ``root`` (through /proc), nearest first."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            found.append(pid)
            todo.append(pid)
    return found


def _signal_all(sig: int) -> int:
    pids = descendants(os.getpid())
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)
    return len(pids)


def _reap() -> list[tuple[int, int]]:
    """The children that ended, without waiting."""
    ended: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        ended.append((pid, status))


class Supervisor:
    def __init__(self, grace: float) -> None:
        self.grace = grace
        self.cli = 0
        self.status: int | None = None
        self.stopping = False

    def stop(self, _signum: int = 0, _frame: object = None) -> None:
        """SIGTERM or SIGHUP: every descendant gets SIGTERM now, and SIGKILL after the grace (SIGALRM)."""
        if not self.stopping:
            self.stopping = True
            _signal_all(signal.SIGTERM)
            signal.setitimer(signal.ITIMER_REAL, self.grace)

    def run(self) -> None:
        """Reap children (blocking) until the CLI has ended, then end every other descendant."""
        while self.status is None:
            pid, status = os.waitpid(-1, 0)  # a signal's handler runs, then the wait goes on (PEP 475)
            if pid == self.cli:
                self.status = status
        signal.setitimer(signal.ITIMER_REAL, 0)
        self.end_rest()

    def end_rest(self) -> None:
        if _signal_all(signal.SIGTERM):
            deadline = time.monotonic() + self.grace
            while descendants(os.getpid()) and time.monotonic() < deadline:
                _reap()
                time.sleep(_POLL)
        while _signal_all(signal.SIGKILL):
            _reap()
            time.sleep(_POLL)
        _reap()

    def exit(self) -> None:
        status = self.status if self.status is not None else 0
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            with contextlib.suppress(OSError, ValueError):  # SIGKILL and SIGSTOP take no handler
                signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
            time.sleep(1)  # a signal that does not end a process (SIGCHLD...) leaves the exit below
            os._exit(128 + sig)
        os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def main(argv: list[str]) -> None:
    report, grace, rest = int(argv[0]), float(argv[1]), argv[3:]
    become_subreaper()
    sup = Supervisor(grace)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, sup.stop)
    signal.signal(signal.SIGALRM, lambda _s, _f: _signal_all(signal.SIGKILL))
    try:
        sup.cli = os.posix_spawnp(rest[0], rest, os.environ)
    except OSError as exc:
        os.write(report, f"E{exc.errno or 2}\n".encode())
        os._exit(127)
    signal.signal(signal.SIGINT, lambda _s, _f: None)  # the CLI's to handle (set after the spawn: not inherited)
    os.write(report, f"P{sup.cli}\n".encode())
    os.close(report)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)  # the CLI's pipes are the CLI's: they close when it (and what it started) lets go
    os.close(null)
    sup.run()
    sup.exit()


if __name__ == "__main__":
    main(sys.argv[1:])
