"""Start a CLI with its pipes teed into a frame log: ``python _tee.py LOG -- ARGV...`` (standard library only).

Every stdin line the driver writes, every stdout line and stderr chunk the CLI prints, stdin's end and the exit
code go to LOG as one JSON object per line (``{"k": "in"|"out"|"err"|"eof"|"exit", "b": text}``), each written
before it is passed on, so the log keeps the order in which one side could react to the other. The CLI runs in
this process's group: signals to the group reach it, and a SIGTERM sent to this process alone is passed on.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from typing import IO, Any


class _Log:
    def __init__(self, path: str) -> None:
        self._fh = open(path, "ab", buffering=0)  # noqa: SIM115 - open for the life of the process
        self._lock = threading.Lock()

    def note(self, kind: str, data: bytes | None = None, **extra: Any) -> None:
        entry: dict[str, Any] = {"k": kind, **extra}
        if data is not None:
            entry["b"] = data.decode("utf-8", "surrogateescape")
        line = json.dumps(entry, ensure_ascii=True).encode() + b"\n"
        with self._lock:
            self._fh.write(line)


def _lines(src: IO[bytes], dst: IO[bytes] | None, log: _Log, kind: str) -> None:
    try:
        while True:
            line = src.readline()
            if not line:
                break
            newline = line.endswith(b"\n")
            log.note(kind, line[:-1] if newline else line, **({} if newline else {"nl": False}))
            if dst is not None:
                try:
                    dst.write(line)
                    dst.flush()
                except (BrokenPipeError, OSError, ValueError):
                    dst = None
    finally:
        if kind == "in":
            log.note("eof")
            if dst is not None:
                try:
                    dst.close()
                except OSError:
                    pass


def _chunks(src: IO[bytes], log: _Log) -> None:
    fd = src.fileno()
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return
        log.note("err", chunk)
        try:
            os.write(2, chunk)
        except OSError:
            pass


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: _tee.py LOG -- ARGV...\n")
        return 2
    log = _Log(argv[1])
    try:
        child = subprocess.Popen(argv[3:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        sys.stderr.write(f"cannot start {argv[3]!r}: {exc}\n")
        log.note("exit", rc=127)
        return 127
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None

    def forward(signum: int, _frame: Any) -> None:
        try:
            child.send_signal(signum)
        except OSError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    threading.Thread(target=_lines, args=(sys.stdin.buffer, child.stdin, log, "in"), daemon=True).start()
    out = threading.Thread(target=_lines, args=(child.stdout, sys.stdout.buffer, log, "out"), daemon=True)
    err = threading.Thread(target=_chunks, args=(child.stderr, log), daemon=True)
    out.start()
    err.start()
    rc = child.wait()
    out.join()
    err.join()
    log.note("exit", rc=rc)
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
