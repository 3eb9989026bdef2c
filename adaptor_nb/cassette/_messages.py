"""Supplemental messages on a cassette: where the host sent each one, so that a replay gives it at the same point.

A message the host sends during a run is noted in the running process's frame log as a ``msg`` frame (its text)
at the moment it is queued, which is after every output line the driver could have seen by then. On replay the
player stops at that frame until the host sends a message again; the cassette checks that message against the
recorded one and signals the player through a FIFO: ``+`` to go on, ``!`` and the reason to stop with an error
(a message the recording does not have, or a different text), so a mismatch ends the run instead of hanging it.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from ._format import preview


def note(log: Path, text: str) -> None:
    """Append the host's message ``text`` to the tee frame log ``log`` (the tee appends there too, line by line)."""
    line = json.dumps({"k": "msg", "b": text}, ensure_ascii=True) + "\n"
    with contextlib.suppress(OSError), log.open("ab") as fh:  # a log already gone: nothing left to record into
        fh.write(line.encode("ascii"))


class Signals:
    """The host's end of one player's message FIFO, and the messages its recording expects, in order."""

    def __init__(self, path: Path, frames: list[dict[str, Any]]) -> None:
        self.path = path
        self.expected = [str(f.get("b", "")) for f in frames if f.get("k") == "msg"]
        self.next = 0
        os.mkfifo(path, 0o600)
        # Opened for reading and writing, so the open does not wait for the player and writes never fail for
        # want of a reader; the player opens it for reading when it starts.
        self._fd: int | None = os.open(path, os.O_RDWR | os.O_NONBLOCK)

    def admit(self, text: str) -> str:
        """Tell the player the host sent ``text``; returns why that does not match the recording ('' if it does)."""
        if self.next < len(self.expected) and self.expected[self.next] == text:
            self.next += 1
            self._write(b"+\n")
            return ""
        if self.next < len(self.expected):
            why = (
                f"the message {preview(text)!r} was sent where the recording has {preview(self.expected[self.next])!r}"
            )
        else:
            why = f"the message {preview(text)!r} was sent where the recording has no message"
        self._write(b"!" + json.dumps(why).encode("ascii") + b"\n")
        return why

    def _write(self, data: bytes) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.write(self._fd, data)

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
