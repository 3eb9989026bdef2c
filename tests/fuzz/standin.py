"""A stand-in CLI that writes, for each turn, the stdout lines its prompt asks for: the fuzz and long-line tests.

Usage: ``python standin.py MODE [ignored args...]``. MODE is the protocol it speaks:

* ``stream``: Claude Code / CodeBuddy Code ``--input-format stream-json``. Control requests are answered with an
  empty success; each user line is echoed back (``isReplay``), then the turn's lines are written.
* ``appserver``: ``codex app-server``. ``initialize``, ``thread/start`` and other requests are answered; after
  ``turn/start`` is answered the turn's lines are written, ``@TURN@`` replaced by the turn id (a new one per turn).
* ``oneshot``: Cursor Agent. The prompt is read from stdin, the lines are written, the process exits with code 0.

The turn's script travels inside the prompt as ``FUZZ<base64 of a JSON object>ZZUF``: ``lines`` (strings written
as they are, each followed by a newline); ``repeat`` ([line, count]: that line written count times); ``flood``
(``true``: then ``x`` without a newline, forever; a number: that many ``x`` bytes, then a newline); ``after``
(lines written after all that); ``stderr`` (strings written to stderr first; a surrogate from U+DC80 to U+DCFF
is the byte it stands for, here and in ``lines``); ``exit`` (then end the process with code 1); ``daemon`` (a
file: first start a daemon that double-forks, calls ``setsid``, closes its descriptors, writes its pid there and
sleeps).
"""

from __future__ import annotations

import base64
import json
import re
import sys
from typing import Any

_SCRIPT = re.compile(rb"FUZZ([A-Za-z0-9+/=]+)ZZUF")
out = sys.stdout.buffer


def script_of(raw: bytes) -> dict[str, Any] | None:
    found = _SCRIPT.search(raw)
    if found is None:
        return None
    value = json.loads(base64.b64decode(found.group(1)))
    return value if isinstance(value, dict) else None


def send(obj: Any) -> None:
    out.write(json.dumps(obj).encode() + b"\n")
    out.flush()


def encoded(line: str) -> bytes:
    """``line`` as bytes: a surrogate from U+DC80 to U+DCFF is the byte it escapes (invalid UTF-8 as a CLI writes
    it), any other surrogate its three-byte form (also invalid UTF-8)."""
    try:
        return line.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return line.encode("utf-8", "surrogatepass")


def _write(lines: list[str], turn: str) -> None:
    for line in lines:
        out.write(encoded(line.replace("@TURN@", turn)) + b"\n")
    out.flush()


def daemonize(pid_file: str) -> None:
    """Start a daemon the classic way (fork, ``setsid``, fork again, let go of every descriptor; it sleeps), and
    return once its pid is in ``pid_file``."""
    import os
    import time

    if os.fork() == 0:
        os.setsid()
        read, write = os.pipe()
        if os.fork() == 0:
            os.close(read)
            os.write(write, str(os.getpid()).encode())
            os.close(write)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            time.sleep(300)
            os._exit(0)
        os.close(write)
        pid = os.read(read, 64)
        with open(pid_file, "wb") as fh:
            fh.write(pid)
        os._exit(0)
    os.wait()


def play(script: dict[str, Any], turn: str = "") -> None:
    if script.get("daemon"):
        daemonize(str(script["daemon"]))
    for chunk in script.get("stderr", []):
        sys.stderr.buffer.write(encoded(chunk))
        sys.stderr.buffer.flush()
    _write(script.get("lines", []), turn)
    if "repeat" in script:
        line, count = script["repeat"]
        data = line.replace("@TURN@", turn).encode() + b"\n"
        for _ in range(count):
            out.write(data)
        out.flush()
    flood = script.get("flood")
    block = b"x" * (1 << 16)
    if flood is True:
        while True:
            out.write(block)
    if flood:
        left = int(flood)
        while left > 0:
            out.write(block[:left])
            left -= len(block)
        out.write(b"\n")
        out.flush()
    _write(script.get("after", []), turn)
    if script.get("exit"):
        sys.exit(1)


def stream() -> None:
    for raw in sys.stdin.buffer:
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(msg, dict):
            continue
        if msg.get("type") == "control_request":
            rid = msg.get("request_id", "")
            send({"type": "control_response", "response": {"subtype": "success", "request_id": rid, "response": {}}})
            continue
        if msg.get("type") != "user":
            continue
        send({**msg, "session_id": "standin", "parent_tool_use_id": None, "isReplay": True})
        script = script_of(raw)
        if script is not None:
            play(script)


def appserver() -> None:
    turns = 0
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        method, rid = msg.get("method"), msg.get("id")
        if rid is None:
            continue
        if method == "initialize":
            send({"id": rid, "result": {"userAgent": "standin/1"}})
        elif method in ("thread/start", "thread/resume"):
            send({"id": rid, "result": {"thread": {"id": "thr_1"}, "model": "m"}})
        elif method == "turn/start":
            turns += 1
            turn = f"turn_{turns}"
            send({"id": rid, "result": {"turn": {"id": turn, "status": "inProgress"}}})
            script = script_of(raw)
            if script is not None:
                play(script, turn)
        else:
            send({"id": rid, "result": {}})


def oneshot() -> None:
    script = script_of(sys.stdin.buffer.read())
    if script is not None:
        play(script)


if __name__ == "__main__":
    {"stream": stream, "appserver": appserver, "oneshot": oneshot}[sys.argv[1]]()
