"""Which process holds a lease, and whether that process is certainly gone.

A lease records its holder's machine, process id and process start time. When the holder ran on this machine (same
host name, boot and process-id namespace) and that process no longer exists, nobody can be writing: a kernel that
was killed or restarted mid-run would otherwise keep its threads busy until the lease expired. Anywhere the answer
is not certain (another machine, no /proc, a process we may not signal) the holder counts as alive and the lease
runs its course.
"""

from __future__ import annotations

import contextlib
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import ThreadBusyError

_PROC = Path("/proc")


@dataclass(frozen=True)
class Holder:
    """The process that took a lease. ``host`` is empty where it cannot be told apart reliably."""

    host: str = ""
    pid: int = 0
    started: str = ""

    def describe(self) -> str:
        return f"process {self.pid} on this machine" if self.host and self.pid else "another process"


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _host() -> str:
    boot = _read(_PROC / "sys" / "kernel" / "random" / "boot_id")
    try:
        namespace = os.readlink(_PROC / "self" / "ns" / "pid")
    except OSError:
        namespace = ""
    if not boot or not namespace:
        return ""  # without both, two machines (or containers) could look alike: never judge a holder gone
    return f"{socket.gethostname()}|{boot}|{namespace}"


def _stat(pid: int) -> tuple[str, str] | None:
    """(state, start time in clock ticks since boot) of ``pid``, or None when it does not exist."""
    text = _read(_PROC / str(pid) / "stat")
    if not text:
        return None
    # The command name (field 2) is in parentheses and may itself hold spaces or parentheses.
    fields = text[text.rfind(")") + 2 :].split()
    if len(fields) < 20:
        return None
    return fields[0], fields[19]


_CURRENT: tuple[int, Holder] | None = None


def current() -> Holder:
    """This process as a lease holder (recomputed after a fork)."""
    global _CURRENT
    pid = os.getpid()
    if _CURRENT is None or _CURRENT[0] != pid:
        stat = _stat(pid)
        _CURRENT = (pid, Holder(host=_host(), pid=pid, started=stat[1] if stat else ""))
    return _CURRENT[1]


def is_gone(holder: Holder) -> bool:
    """True only when ``holder`` ran on this machine and its process has certainly ended."""
    me = current()
    if not holder.host or holder.host != me.host or holder.pid <= 0 or not holder.started:
        return False
    if holder.pid == me.pid:
        return holder.started != me.started
    with contextlib.suppress(PermissionError):  # a process we may not signal exists
        try:
            os.kill(holder.pid, 0)
        except ProcessLookupError:
            return True
    stat = _stat(holder.pid)
    if stat is None:
        return True
    state, started = stat
    return started != holder.started or state in ("Z", "X")  # the id was reused, or the holder exited unreaped


def take_over(key: str, owner: str, row: Any, now: float, me: Holder) -> str:
    """Whether ``owner`` may take the lease of ``key`` whose stored row is ``row`` (owner, expires_at, holder host,
    pid, started; or None): "" when it is free, expired or its own, the old owner's description when its holder is
    gone; otherwise ThreadBusyError."""
    if row is None or row[1] <= now or row[0] == owner:
        return ""
    holder = Holder(host=row[2], pid=row[3], started=row[4])
    if not is_gone(holder):
        raise ThreadBusyError(
            f"thread {key!r} is busy: owner {row[0]!r} ({holder.describe()}) holds its lease for another "
            f"{row[1] - now:.1f}s; wait for that run to finish, or use another thread key",
            key=key,
            details={"owner": row[0], "expires_at": row[1], "pid": row[3] if row[2] == me.host else None},
        )
    # The holder ran on this machine and its process has ended: nobody can be writing under that lease.
    return f"{row[0]} ({holder.describe()}, now gone)"
