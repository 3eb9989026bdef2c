"""Lease holders: a holder is judged gone only when it ran on this machine and its process has certainly ended."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace

from adaptor_nb.threadstore._holder import Holder, current, is_gone


def start_time(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as fh:
        text = fh.read()
    return text[text.rfind(")") + 2 :].split()[19]


def waiting_child() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)


def test_this_process_is_a_known_live_holder() -> None:
    me = current()
    assert me.host and me.pid == os.getpid() and me.started == start_time(os.getpid())
    assert not is_gone(me)
    assert is_gone(replace(me, started=str(int(me.started) + 1)))  # same id, another start: the id was reused


def test_a_child_is_alive_until_it_ends_then_gone_whether_reaped_or_not() -> None:
    child = waiting_child()
    try:
        holder = Holder(host=current().host, pid=child.pid, started=start_time(child.pid))
        assert not is_gone(holder)
        assert child.stdin is not None
        child.stdin.close()
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped: a zombie
        assert is_gone(holder)
    finally:
        child.wait()
    assert is_gone(holder)  # reaped: the id no longer exists


def test_holders_elsewhere_or_unknown_are_never_judged_gone() -> None:
    child = waiting_child()
    started = start_time(child.pid)
    assert child.stdin is not None
    child.stdin.close()
    child.wait()
    dead = Holder(host=current().host, pid=child.pid, started=started)
    assert is_gone(dead)
    assert not is_gone(replace(dead, host="another-machine|boot|pid:[1]"))
    assert not is_gone(replace(dead, host=""))  # a store written where machines cannot be told apart
    assert not is_gone(replace(dead, started=""))
    assert not is_gone(replace(dead, pid=0))
    assert not is_gone(Holder())
