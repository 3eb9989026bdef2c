"""Stand in for a CLI by playing its recorded frames back: ``python _play.py FRAMES [FIFO]`` (standard library only).

FRAMES holds the frames of one recorded process (in/out/err/msg/eof/exit with their text, see ``read_frames``).
Recorded output is written in order; at each recorded input the player waits for the driver's next stdin line,
and at each ``msg`` frame (where the host sent a supplemental message) for the host's signal on FIFO
(``+`` to go on; ``!`` and a reason to stop: the player prints the reason and exits with status 3). Every wait
watches the FIFO too, so a stop signal ends the replay whatever the player waits for.
Identifiers the driver makes up afresh each run (request ids, message uuids) are learnt by comparing that line
with the recorded one, and put into the output that follows, so the driver sees answers to its own requests.
After the last frame it waits for stdin to close and exits with the recorded exit code (0 if none).

The player starts for every replayed process, so it imports little: not ``typing``, not ``threading`` (one
``select`` loop reads stdin and the FIFO), not ``signal`` unless it must die by one, and not ``json``, whose
import (with ``re``) takes longer than the rest of the player's start: it reads and writes JSON with
``adaptor_nb/_quickjson.py`` (json's C accelerator, the same output).
"""

from __future__ import annotations

import os
import select
import sys
import time

TYPE_CHECKING = False  # the player starts for every replayed process: it does not import typing to run
if TYPE_CHECKING:
    from typing import Any

if __package__:  # imported as part of the package (tests)
    from .._quickjson import dumps as _dumps
    from .._quickjson import loads as _loads
else:  # run as a script with -I -S: the package is not importable, the folder above this one is
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from _quickjson import dumps as _dumps  # type: ignore[import-not-found,no-redef]
    from _quickjson import loads as _loads  # type: ignore[no-redef]

    del sys.path[0]

MISMATCH = 3
MESSAGE_WAIT = 120.0  # seconds a recorded message may take to be sent again before the replay gives up
PLACEHOLDER = b"00000000-0000-4000-8000-"  # how the cassette's scrubber starts every UUID it replaces
PLACEHOLDER_SIZE = len(PLACEHOLDER) + 12  # and then 12 lower-case hex digits
_HEX = frozenset(b"0123456789abcdef")
READ_SIZE = 1 << 16


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
                out[key] = ids.get(_dumps(value), value)
            else:
                out[key] = remap(value, ids)
        return out
    if isinstance(obj, list):
        return [remap(v, ids) for v in obj]
    return obj


def _parse(raw: bytes) -> Any:
    try:
        return _loads(raw.decode("utf-8"))
    except ValueError:  # also a line that is not UTF-8
        return None


class Ids:
    """Recorded identifiers and the driver's own for them, with a cheap test of whether an output line has one.

    A cassette replaces every UUID with a placeholder that starts with ``PLACEHOLDER``, so for those one search for
    the prefix and a set lookup per placeholder found decide; other identifiers (numbers, other strings) are
    searched for one by one.
    """

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}  # the recorded value as JSON -> the driver's value
        self._placeholders: set[bytes] = set()
        self._others: list[bytes] = []

    def __bool__(self) -> bool:
        return bool(self.values)

    def add(self, recorded: str | int, actual: str | int) -> None:
        key = _dumps(recorded)
        if key in self.values:
            self.values[key] = actual
            return
        self.values[key] = actual
        raw = str(recorded).encode("utf-8", "surrogateescape")
        if isinstance(recorded, str) and _is_placeholder(raw):
            self._placeholders.add(raw)
        else:
            self._others.append(raw)

    def found_in(self, line: bytes) -> bool:
        if self._placeholders:
            at = line.find(PLACEHOLDER)
            while at >= 0:
                if line[at : at + PLACEHOLDER_SIZE] in self._placeholders:
                    return True
                at = line.find(PLACEHOLDER, at + 1)
        return any(raw in line for raw in self._others)


def _is_placeholder(raw: bytes) -> bool:
    return len(raw) == PLACEHOLDER_SIZE and raw.startswith(PLACEHOLDER) and _HEX.issuperset(raw[len(PLACEHOLDER) :])


def _out_line(raw: bytes, ids: Ids) -> bytes:
    if not ids or not ids.found_in(raw):
        return raw
    obj = _parse(raw)
    if obj is None:
        return raw
    return _dumps(remap(obj, ids.values)).encode("utf-8", "surrogateescape")


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


class Input:
    """The driver's stdin lines and the host's signals on the FIFO, read in one ``select`` loop.

    Each ``+`` on the FIFO lets one ``msg`` frame pass; ``!`` and a reason ends the replay at once. Whatever the
    player waits for (a line, the end of stdin, a message), the FIFO is watched too.
    """

    def __init__(self, fifo: str | None) -> None:
        self._stdin = sys.stdin.fileno()
        self._pending = b""
        self._eof = False
        # The host holds the FIFO open for writing, so this open finds a writer at once.
        self._fifo: int | None = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK) if fifo else None
        self._signals = b""
        self._passes = 0

    def line(self) -> bytes | None:
        """The driver's next stdin line without its newline (a last line without one as it is); None at EOF."""
        while True:
            cut = self._pending.find(b"\n")
            if cut >= 0:
                line = self._pending[:cut]
                self._pending = self._pending[cut + 1 :]
                return line
            if self._eof:
                rest, self._pending = self._pending, b""
                return rest or None
            self._wait(True, None)

    def message(self, text: str) -> None:
        """Wait for the host's signal that it sent the message recorded here (``text``)."""
        deadline = time.monotonic() + MESSAGE_WAIT
        while not self._passes:
            if not self._wait(False, deadline):
                _stop(f"the recording has the message {text[:60]!r} here; none was sent in {MESSAGE_WAIT:g} s")
        self._passes -= 1

    def _wait(self, stdin: bool, deadline: float | None) -> bool:
        """Wait until stdin (if ``stdin``) or the FIFO has something and read it; False when ``deadline`` passed."""
        fds = [self._stdin] if stdin else []
        if self._fifo is not None:
            fds.append(self._fifo)
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select(fds, [], [], timeout)
        if not ready:
            return False
        if self._fifo is not None and self._fifo in ready:
            self._read_signals(self._fifo)
        if stdin and self._stdin in ready:
            chunk = os.read(self._stdin, READ_SIZE)
            if chunk:
                self._pending += chunk
            else:
                self._eof = True
        return True

    def _read_signals(self, fd: int) -> None:
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            return
        if not chunk:  # the host closed the FIFO: no more signals
            os.close(fd)
            self._fifo = None
            return
        self._signals += chunk
        while b"\n" in self._signals:
            line, self._signals = self._signals.split(b"\n", 1)
            if line.startswith(b"!"):
                _stop(str(_parse(line[1:])))
            self._passes += 1


def _stop(why: str) -> None:
    """End the replay at once with ``why`` on stderr (the driver reports it as the CLI's last words)."""
    try:
        sys.stderr.write(f"adaptor_nb cassette: {why}; record the run again (--mode once or rewrite)\n")
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(MISMATCH)


def play(frames: list[tuple[str, int, bytes]], stdin: Input) -> int:
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
            stdin.message(raw.decode("utf-8", "replace"))
        elif kind == "err":
            sys.stderr.buffer.write(raw)
            sys.stderr.buffer.flush()
        elif kind == "in" and not closed:
            got = stdin.line()
            if got is None:
                closed = True
                continue
            if got != raw:
                recorded, actual = _parse(raw), _parse(got)
                if recorded is not None and actual is not None:
                    learn(recorded, actual, ids)
        elif kind == "eof" and not closed:
            while stdin.line() is not None:
                pass
            closed = True
        elif kind == "exit":
            return _exit(arg)
    if pending and not _flush(stdout, pending):
        return 0
    if not closed:
        while stdin.line() is not None:
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
        import signal  # only here: it imports enum

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
    return play(frames, Input(argv[2] if len(argv) == 3 else None))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
