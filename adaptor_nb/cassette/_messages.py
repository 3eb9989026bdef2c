"""Supplemental messages on a cassette: where the host sent each one, so that a replay gives it at the same point.

A message the host sends during a run is noted in the running process's frame log as a ``msg`` frame (its text)
at the moment it is queued, which is after every output line the driver could have seen by then. On replay the
player stops at that frame until the host sends a message again; the cassette hands that message to the player
(``Player.admit``), which goes on when it is the recorded one and stops with an error otherwise (a message the
recording does not have, or a different text), so a mismatch ends the run instead of hanging it.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path


def note(log: Path, text: str) -> None:
    """Append the host's message ``text`` to the tee frame log ``log`` (the tee appends there too, line by line)."""
    line = json.dumps({"k": "msg", "b": text}, ensure_ascii=True) + "\n"
    with contextlib.suppress(OSError), log.open("ab") as fh:  # a log already gone: nothing left to record into
        fh.write(line.encode("ascii"))
