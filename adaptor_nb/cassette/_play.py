"""A recorded CLI process played back inside this process, as a stand-in (``adaptor_nb.driver._standin``).

The frames of one recorded process (in/out/err/msg/eof/exit with their text, see ``_format.player_frames``) are
played in order: recorded output goes to the driver's stdout reader, at each recorded input the player waits for
the driver's next stdin line, and at each ``msg`` frame (where the host sent a supplemental message) for the host
to send that message again (``admit``). A message the recording does not have there, or one that does not come
within ``MESSAGE_WAIT``, ends the replay: the reason goes to stderr and the process "exits" with status 3.
Identifiers the driver makes up afresh each run (request ids, message uuids) are learnt by comparing that line
with the recorded one, and put into the output that follows, so the driver sees answers to its own requests.
After the last frame it waits for stdin to close and exits with the recorded exit code (0 if none).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

from .._lossless import escape_surrogates, to_bytes
from .._quickjson import dumps as _quick_dumps
from .._quickjson import loads as _loads
from ..driver._standin import StandInIO, ends_on
from ._format import preview

MISMATCH = 3
MESSAGE_WAIT = 120.0  # seconds a recorded message may take to be sent again before the replay gives up
PLACEHOLDER = b"00000000-0000-4000-8000-"  # how the cassette's scrubber starts every UUID it replaces
_PLACEHOLDER = re.compile(re.escape(PLACEHOLDER) + rb"[0-9a-f]{12}")  # and then 12 lower-case hex digits


ID_KEYS = frozenset({"id", "request_id", "requestId", "uuid", "parent_tool_use_id", "itemId", "item_id"})
_ID_KEYS = frozenset(k.encode() for k in ID_KEYS)


def _dumps(value: Any) -> str:
    return escape_surrogates(_quick_dumps(value))


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


_PLAIN = re.compile(rb"[ !#-\[\]-~]*").fullmatch  # printable ASCII with no quote or backslash: a JSON string as it is
_SIZE = len(PLACEHOLDER) + 12  # the length of a placeholder
_HEX = frozenset(b"0123456789abcdef")


def tails(data: bytes) -> set[bytes]:
    """The 12 bytes after each placeholder start in ``data``: a superset of the tails of its placeholders (splitting
    at the shared start is several times quicker than a regex scan)."""
    return {part[:12] for part in data.split(PLACEHOLDER)[1:]}


def _id_value_at(data: bytes, at: int) -> bool:
    """Whether the placeholder at ``at`` is the whole value of an identifier key: ``{"uuid":"<it>"`` or
    ``,"uuid":"<it>"``. In valid compact JSON a quote after ``{`` or ``,`` opens a key, so a placeholder quoted
    inside a string's text never passes."""
    if data[at + _SIZE : at + _SIZE + 1] != b'"' or data[at - 3 : at] != b'":"':
        return False
    key = data.rfind(b'"', 0, at - 3)
    return key > 0 and data[key + 1 : at - 3] in _ID_KEYS and data[key - 1 : key] in (b"{", b",")


def _id_value_before(before: bytes) -> bool:
    """Whether a placeholder right after ``before`` (the text since the previous placeholder) opens the value of an
    identifier key: ``before`` ends with ``{"uuid":"`` or ``,"uuid":"``. As ``_id_value_at``, on the split text."""
    if not before.endswith(b'":"'):
        return False
    end = len(before) - 3
    key = before.rfind(b'"', 0, end)
    return key > 0 and before[key + 1 : end] in _ID_KEYS and before[key - 1 : key] in (b"{", b",")


def learn_line(recorded: bytes, actual: bytes, ids: Ids) -> bool:
    """``learn`` for the common case without decoding: ``actual`` is the recorded line (compact JSON) with only
    placeholder values of identifier keys replaced, each by a plain string of the same length. False (nothing
    noted) otherwise."""
    if len(recorded) != len(actual):
        return False
    pos = 0
    changed: list[tuple[int, int]] = []
    at = recorded.find(PLACEHOLDER)
    while at >= 0:
        end = at + _SIZE
        if recorded[at:end] != actual[at:end]:
            if recorded[pos:at] != actual[pos:at]:
                return False
            if not (_HEX.issuperset(recorded[at + len(PLACEHOLDER) : end]) and _id_value_at(recorded, at)):
                return False
            if not _PLAIN(actual[at:end]):
                return False
            changed.append((at, end))
            pos = end
        at = recorded.find(PLACEHOLDER, end)
    if recorded[pos:] != actual[pos:]:
        return False
    for start, end in changed:
        ids.add(recorded[start:end].decode("ascii"), actual[start:end].decode("ascii"))
    return True


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
    every placeholder in the text, met with the set of learnt ones, decides; other identifiers (numbers, other
    strings) are searched for one by one.
    """

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}  # the recorded value as JSON -> the driver's value
        self._placeholders: set[bytes] = set()  # the learnt ones, by their last 12 bytes
        self._swap: dict[bytes, bytes] = {}  # a learnt placeholder's last 12 bytes -> the driver's value as JSON
        self._others: list[bytes] = []

    def __bool__(self) -> bool:
        return bool(self.values)

    def add(self, recorded: str | int, actual: str | int) -> None:
        key = _dumps(recorded)
        known = key in self.values
        self.values[key] = actual
        raw = to_bytes(str(recorded))
        if isinstance(recorded, str) and _PLACEHOLDER.fullmatch(raw):
            self._placeholders.add(raw[-12:])
            self._swap[raw[-12:]] = to_bytes(_dumps(actual))
        elif not known:
            self._others.append(raw)

    def found_in(self, line: bytes) -> bool:
        if self._placeholders and not self._placeholders.isdisjoint(tails(line)):
            return True
        return any(raw in line for raw in self._others)

    def swapped(self, burst: bytes) -> bytes | None:
        """``burst`` (whole lines of compact JSON, as ``json.dumps`` writes them) with each learnt placeholder that
        is the value of an identifier key replaced by the driver's value; what ``remap`` does to each line, without
        decoding one. None when identifiers other than placeholders were learnt (those need ``remap``)."""
        if self._others:
            return None
        # Split at every placeholder start: part i (i >= 1) begins with the 12 bytes that end the i-th placeholder.
        parts = burst.split(PLACEHOLDER)
        if len(parts) == 1:
            return burst
        heads = [part[:12] for part in parts]
        hits = self._placeholders.intersection(heads)
        if not hits:
            return burst
        swaps = [  # the parts whose leading placeholder is an identifier's whole value, in order
            i
            for i, head in enumerate(heads)
            if head in hits and i and parts[i][12:13] == b'"' and _id_value_before(parts[i - 1])
        ]
        if not swaps:
            return burst
        values = [self._swap[heads[i]] for i in swaps]
        for i in swaps:  # the value's quotes go with the placeholder (the driver's value is JSON, quotes and all)
            parts[i - 1] = parts[i - 1][:-1]
            parts[i] = parts[i][13:]
        out: list[bytes] = []
        start = 0
        for i, value in zip(swaps, values, strict=True):
            out.append(PLACEHOLDER.join(parts[start:i]))
            out.append(value)
            start = i
        out.append(PLACEHOLDER.join(parts[start:]))
        return b"".join(out)

    def lines_in(self, burst: bytes) -> list[int]:
        """Where the lines of ``burst`` (lines ended by newlines) that hold a recorded identifier start, in order."""
        hits: set[int] = set()
        wanted = list(self._others)
        if self._placeholders:
            wanted += [PLACEHOLDER + tail for tail in self._placeholders.intersection(tails(burst))]
        for raw in wanted:
            at = burst.find(raw)
            while at >= 0:
                hits.add(burst.rfind(b"\n", 0, at) + 1)
                at = burst.find(raw, at + 1)
        return sorted(hits)


def _out_line(raw: bytes, ids: Ids) -> bytes:
    if not ids or not ids.found_in(raw):
        return raw
    return _remapped(raw, ids)


def _remapped(raw: bytes, ids: Ids) -> bytes:
    obj = _parse(raw)
    if obj is None:
        return raw
    return to_bytes(_dumps(remap(obj, ids.values)))


_bytes = to_bytes


class Player:
    """One recorded process played in-process (a ``StandIn``); ``admit`` is the host sending a message.

    ``frames`` are the recording's (``{"k": kind, "b": text, ...}``); ``restore`` puts this machine's paths into a
    recorded text. Frames are turned into bytes as they are played, consecutive output in one piece.
    """

    def __init__(
        self, frames: list[dict[str, Any]], restore: Callable[[str], str], loop: asyncio.AbstractEventLoop
    ) -> None:
        self._frames = frames
        self._restore = restore
        self._at = 0
        self._loop = loop
        self._io: StandInIO | None = None
        self._ids = Ids()
        self._pending = b""  # stdin bytes not yet taken as lines
        self._eof = False  # the driver closed stdin
        self._closed = False  # no more recorded input is waited for
        self._ended = False
        self.expected = [str(f.get("b", "")) for f in frames if f["k"] == "msg"]
        self.next = 0
        self._passes = 0
        self._timer: asyncio.TimerHandle | None = None

    def _text(self, frame: dict[str, Any]) -> str:
        text = str(frame.get("b", ""))
        return self._restore(text) if "<" in text else text

    # -- the stand-in --------------------------------------------------------------------------------------

    def begin(self, io: StandInIO) -> None:
        self._io = io
        self._play()

    def stdin(self, data: bytes) -> None:
        self._pending += data
        self._play()

    def stdin_closed(self) -> None:
        self._eof = True
        self._play()

    def signal(self, sig: int) -> None:
        if ends_on(sig):
            self._end(-sig)

    # -- the host's messages -------------------------------------------------------------------------------

    def admit(self, text: str) -> str:
        """The host sent ``text``; returns why that does not match the recording ('' if it does)."""
        if self.next < len(self.expected) and self.expected[self.next] == text:
            self.next += 1
            self._passes += 1
            self._loop.call_soon_threadsafe(self._play)
            return ""
        if self.next < len(self.expected):
            why = (
                f"the message {preview(text)!r} was sent where the recording has {preview(self.expected[self.next])!r}"
            )
        else:
            why = f"the message {preview(text)!r} was sent where the recording has no message"
        self._loop.call_soon_threadsafe(self._stop, why)
        return why

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # -- playing -------------------------------------------------------------------------------------------

    def _play(self) -> None:
        """Play frames until one waits for the driver (a line, the end of stdin) or the host (a message)."""
        io = self._io
        if io is None or self._ended:
            return
        frames, ids = self._frames, self._ids
        count = len(frames)
        while self._at < count:
            frame = frames[self._at]
            kind = frame["k"]
            if kind == "out":  # consecutive output goes out at once: the driver reads it as the CLI's burst
                end = self._at + 1
                while end < count and frames[end]["k"] == "out":
                    end += 1
                io.out(self._burst(frames[self._at : end]))
                self._at = end
                continue
            if kind == "msg":
                if not self._passes:
                    self._wait_message(str(frame.get("b", "")))
                    return
                self._passes -= 1
                self.close()
            elif kind == "err":
                io.err(_bytes(self._text(frame)))
            elif kind == "in" and not self._closed:
                got = self._line()
                if got is None:
                    if not self._eof:
                        return
                    self._closed = True
                else:
                    raw = _bytes(self._text(frame))
                    if got != raw and not learn_line(raw, got, ids):
                        recorded, actual = _parse(raw), _parse(got)
                        if recorded is not None and actual is not None:
                            learn(recorded, actual, ids)
            elif kind == "eof" and not self._closed:
                if not self._drained():
                    return
                self._closed = True
            elif kind == "exit":
                self._end(int(frame.get("rc", 0)))
                return
            self._at += 1
        if self._closed or self._drained():
            self._end(0)

    def _burst(self, frames: list[dict[str, Any]]) -> bytes:
        """Consecutive output frames as one write, with the driver's identifiers in place of the recorded ones.

        When every frame is a whole line of JSON, paths and identifiers are put in over the joined burst (only the
        lines that hold an identifier other than a placeholder are decoded); otherwise frame by frame."""
        ids = self._ids
        if any(f.get("nl") is False or "t" in f for f in frames):
            return b"".join(
                _out_line(_bytes(self._text(f)), ids) + (b"" if f.get("nl") is False else b"\n") for f in frames
            )
        restore = self._restore
        texts = [str(f.get("b", "")) for f in frames]
        burst = to_bytes("\n".join([restore(t) if "<" in t else t for t in texts]) + "\n")
        if not ids:
            return burst
        swapped = ids.swapped(burst)
        if swapped is not None:
            return swapped
        starts = ids.lines_in(burst)
        if not starts:
            return burst
        out: list[bytes] = []
        pos = 0
        for start in starts:
            end = burst.find(b"\n", start)
            out.append(burst[pos:start])
            out.append(_remapped(burst[start:end], ids))
            pos = end
        out.append(burst[pos:])
        return b"".join(out)

    def _line(self) -> bytes | None:
        """The driver's next stdin line without its newline (a last line without one as it is), if there is one."""
        cut = self._pending.find(b"\n")
        if cut >= 0:
            line = self._pending[:cut]
            self._pending = self._pending[cut + 1 :]
            return line
        if self._eof and self._pending:
            line, self._pending = self._pending, b""
            return line
        return None

    def _drained(self) -> bool:
        """Past the recording's input: lines are dropped until stdin closes; True once it has."""
        self._pending = b""
        return self._eof

    def _wait_message(self, text: str) -> None:
        if self._timer is None:
            why = f"the recording has the message {text[:60]!r} here; none was sent in {MESSAGE_WAIT:g} s"
            self._timer = self._loop.call_later(MESSAGE_WAIT, self._stop, why)

    def _stop(self, why: str) -> None:
        """End the replay at once with ``why`` on stderr (the driver reports it as the CLI's last words)."""
        if self._io is not None and not self._ended:
            self._io.err(f"adaptor_nb cassette: {why}; record the run again (--mode once or rewrite)\n".encode())
        self._end(MISMATCH)

    def _end(self, returncode: int) -> None:
        if self._ended:
            return
        self._ended = True
        self.close()
        if self._io is not None:
            self._io.exit(returncode)
