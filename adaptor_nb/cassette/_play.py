"""Stand in for a CLI by playing its recorded frames back: ``python _play.py FRAMES [FIFO]`` (standard library only).

FRAMES holds the frames of one recorded process (in/out/err/msg/eof/exit with their text, see ``read_frames``).
Recorded output is written in order; at each recorded input the player waits for the driver's next stdin line,
and at each ``msg`` frame (where the host sent a supplemental message) for the host's signal on FIFO
(``+`` to go on; ``!`` and a reason to stop: the player prints the reason and exits with status 3).
Identifiers the driver makes up afresh each run (request ids, message uuids) are learnt by comparing that line
with the recorded one, and put into the output that follows, so the driver sees answers to its own requests.
After the last frame it waits for stdin to close and exits with the recorded exit code (0 if none).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading

TYPE_CHECKING = False  # the player starts for every replayed process: it does not import typing to run
if TYPE_CHECKING:
    from typing import Any

MISMATCH = 3
MESSAGE_WAIT = 120.0  # seconds a recorded message may take to be sent again before the replay gives up
PLACEHOLDER = b"00000000-0000-4000-8000-"  # how the cassette's scrubber starts every UUID it replaces
_PLACEHOLDER_ID = re.compile(rb"00000000-0000-4000-8000-[0-9a-f]{12}")
ID_KEYS = frozenset({"id", "request_id", "requestId", "uuid", "parent_tool_use_id", "itemId", "item_id"})


def learn(recorded: Any, actual: Any, ids: Ids) -> None:
    """Note in ``ids`` every identifier whose recorded value differs from the one the driver sent now."""
    if isinstance(recorded, dict) and isinstance(actual, dict):
        for key, value in recorded.items():
            if key not in actual:
                continue
            other = actual[key]
            if key in ID_KEYS and isinstance(value, str | int) and isinstance(other, str | int) and value != other:
                ids.add(value, other)
            else:
                learn(value, other, ids)
    elif isinstance(recorded, list) and isinstance(actual, list):
        for value, other in zip(recorded, actual, strict=False):
            learn(value, other, ids)


def remap(obj: Any, ids: dict[str, Any]) -> Any:
    """``obj`` with recorded identifiers replaced by the driver's own."""
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for key, value in obj.items():
            if key in ID_KEYS and isinstance(value, str | int):
                out[key] = ids.get(json.dumps(value), value)
            else:
                out[key] = remap(value, ids)
        return out
    if isinstance(obj, list):
        return [remap(v, ids) for v in obj]
    return obj


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


class Ids:
    """Recorded identifiers and the driver's own for them, with a cheap test of whether an output line has one.

    A cassette replaces every UUID with a placeholder that starts with ``PLACEHOLDER``, so for those one search for
    the prefix and a set lookup per placeholder found decide; other identifiers (numbers, other strings) are
    searched for one by one.
    """

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}  # json.dumps(recorded value) -> the driver's value
        self._placeholders: set[bytes] = set()
        self._others: list[bytes] = []

    def __bool__(self) -> bool:
        return bool(self.values)

    def add(self, recorded: str | int, actual: str | int) -> None:
        key = json.dumps(recorded)
        if key in self.values:
            self.values[key] = actual
            return
        self.values[key] = actual
        raw = str(recorded).encode("utf-8", "surrogateescape")
        if isinstance(recorded, str) and _PLACEHOLDER_ID.fullmatch(raw):
            self._placeholders.add(raw)
        else:
            self._others.append(raw)

    def found_in(self, line: bytes) -> bool:
        if self._placeholders and PLACEHOLDER in line:
            for found in _PLACEHOLDER_ID.findall(line):
                if found in self._placeholders:
                    return True
        return any(raw in line for raw in self._others)


def _out_line(raw: bytes, ids: Ids) -> bytes:
    if not ids or not ids.found_in(raw):
        return raw
    obj = _parse(raw)
    if obj is None:
        return raw
    return json.dumps(remap(obj, ids.values), ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogateescape"
    )


def read_frames(data: bytes) -> list[tuple[str, int, bytes]]:
    """The frames of a play file: per frame a header line ``KIND ARG LENGTH`` and then LENGTH bytes of its text
    (ARG: 0 for output that ended without a newline, else 1; the exit code for ``exit``)."""
    frames: list[tuple[str, int, bytes]] = []
    pos, end = 0, len(data)
    while pos < end:
        eol = data.index(b"\n", pos)
        kind, arg, size = data[pos:eol].split(b" ")
        pos = eol + 1 + int(size)
        frames.append((kind.decode("ascii"), int(arg), data[eol + 1 : pos]))
    return frames


class Messages:
    """The host's signals on the FIFO, read by a thread: each ``+`` lets one ``msg`` frame pass; ``!`` ends it all."""

    def __init__(self, path: str) -> None:
        self._passes = threading.Semaphore(0)
        self._fh = open(path, "rb", buffering=0)  # noqa: SIM115 - read for the life of the process
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        pending = b""
        while True:
            chunk = self._fh.read(4096)
            if not chunk:
                return
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                if line.startswith(b"!"):
                    _stop(str(json.loads(line[1:].decode("ascii"))))
                self._passes.release()

    def wait(self, text: str) -> None:
        if not self._passes.acquire(timeout=MESSAGE_WAIT):
            _stop(f"the recording has the message {text[:60]!r} here; none was sent in {MESSAGE_WAIT:g} s")


def _stop(why: str) -> None:
    """End the replay at once with ``why`` on stderr (the driver reports it as the CLI's last words)."""
    try:
        sys.stderr.write(f"adaptor_nb cassette: {why}; record the run again (--mode once or rewrite)\n")
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(MISMATCH)


def play(frames: list[tuple[str, int, bytes]], messages: Messages | None = None) -> int:
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    ids = Ids()
    closed = False
    pending: list[bytes] = []
    for kind, arg, raw in frames:
        if kind == "out":
            # Consecutive output goes out in one write: the driver reads it as the CLI's burst of lines.
            pending.append(_out_line(raw, ids))
            if arg:
                pending.append(b"\n")
            continue
        if pending and not _flush(stdout, pending):
            return 0
        if kind == "msg":
            if messages is not None:
                messages.wait(raw.decode("utf-8", "replace"))
        elif kind == "err":
            sys.stderr.buffer.write(raw)
            sys.stderr.buffer.flush()
        elif kind == "in" and not closed:
            got = stdin.readline()
            if not got:
                closed = True
                continue
            got = got[:-1] if got.endswith(b"\n") else got
            if got != raw:
                recorded, actual = _parse(raw), _parse(got)
                if recorded is not None and actual is not None:
                    learn(recorded, actual, ids)
        elif kind == "eof" and not closed:
            while stdin.readline():
                pass
            closed = True
        elif kind == "exit":
            return _exit(arg)
    if pending and not _flush(stdout, pending):
        return 0
    if not closed:
        while stdin.readline():
            pass
    return 0


def _flush(stdout: Any, pending: list[bytes]) -> bool:
    """Write the pending output in one go; False when the driver has gone."""
    try:
        stdout.write(b"".join(pending))
        stdout.flush()
    except (BrokenPipeError, OSError):
        return False
    pending.clear()
    return True


def _exit(rc: int) -> int:
    """Exit as the recorded CLI did: with its code, or killed by the same signal."""
    if rc < 0:
        sys.stdout.flush()
        os.kill(os.getpid(), -rc)
        signal.pause()
    return rc


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        sys.stderr.write("usage: _play.py FRAMES [FIFO]\n")
        return 2
    with open(argv[1], "rb") as fh:
        frames = read_frames(fh.read())
    return play(frames, Messages(argv[2]) if len(argv) == 3 else None)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
