"""A stand-in CLI that replays recorded Claude-style stream-json output, for fixture tests and ingestion benchmarks.

Run it as ``[sys.executable, "-m", "adaptor_nb.testing._replay", FIXTURE]``; any further arguments (the ones a
driver adds) are ignored. It behaves like ``claude -p --input-format stream-json --replay-user-messages``: it waits
for a user line on stdin, echoes it back, then prints recorded lines up to and including the next ``result`` line,
and waits again. A recorded ``can_use_tool`` control request pauses the replay until stdin answers it. Control
requests written to stdin are acknowledged. A fixture that ends without a ``result`` makes it exit with code 1,
like a CLI that died mid-turn.

FIXTURE holds one JSON object per line: either the CLI's own stdout lines, or transcript lines of the form
``{"dir": "out", "msg": {...}}`` (other directions are skipped).
"""

from __future__ import annotations

import itertools
import os
import sys

TYPE_CHECKING = False  # started once per replayed run: typing and collections are not imported to run
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, BinaryIO

if __package__:  # run with -m, or imported by tests
    from .._quickjson import dumps, loads
else:  # run as a script with -I -S: the package is not importable, the folder above this one is
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from _quickjson import dumps, loads  # type: ignore[import-not-found,no-redef]

    del sys.path[0]

__all__ = ["load_fixture", "main"]


def load_fixture(path: str) -> list[bytes]:
    """The stdout lines recorded in ``path`` (transcript files are reduced to their ``out`` lines)."""
    return list(_fixture_lines(path))


def _fixture_lines(path: str) -> Iterator[bytes]:
    """The stdout lines recorded in ``path``, read as they are needed (a long recording is never held whole)."""
    with open(path, "rb") as fh:
        lines = (line.rstrip(b"\r\n") for line in fh)
        first = next((line for line in lines if line.strip()), None)
        if first is None:
            return
        if not first.lstrip().startswith(b'{"meta"'):
            yield first
            yield from (line for line in lines if line.strip())
            return
        import json  # transcripts only: their lines are written again as json.dumps writes them

        for line in itertools.chain((first,), lines):
            if not line.strip():
                continue
            obj = json.loads(line)
            if obj.get("dir") == "out" and "msg" in obj:
                msg = obj["msg"]
                yield msg["_nonjson"].encode() if "_nonjson" in msg else json.dumps(msg).encode()


BLOCK = 1 << 16
_NOT_PLAIN = (b"\r", b'"result"', b'"control_request"', b"\n\n")  # cheapest search first


def _pieces(path: str) -> Iterator[bytes]:
    """What the replay writes, read as it is needed: the recorded stdout lines, where a block of lines with no line
    that steers the replay comes as one piece, those lines joined by newlines.

    The replay only looks into lines that could steer it, so a long recording is passed on a block at a time.
    Empty lines and carriage returns are dropped as for single lines; a block is not searched for lines of only
    spaces (a search per newline costs more than the rest), so within a block those are passed on."""
    with open(path, "rb") as fh:
        first = fh.readline()
        while first and not first.strip():
            first = fh.readline()
        if not first:
            return
        if first.lstrip().startswith(b'{"meta"'):
            yield from _fixture_lines(path)
            return
        yield first.rstrip(b"\r\n")
        rest = b""
        while data := fh.read(BLOCK):
            data = rest + data
            cut = data.rfind(b"\n") + 1
            rest = data[cut:]
            if cut:
                yield from _split(data[: cut - 1])
        yield from _split(rest)


def _split(block: bytes) -> Iterator[bytes]:
    if block and b"\n" not in (block[:1], block[-1:]) and not any(mark in block for mark in _NOT_PLAIN):
        yield block
        return
    for line in block.split(b"\n"):
        line = line.rstrip(b"\r")
        if line.strip():
            yield line


def _kind(line: bytes) -> str:
    """A cheap look at a line's type: only lines that steer the replay are decoded."""
    if b'"result"' not in line and b'"control_request"' not in line:
        return ""
    try:
        obj = loads(line.decode("utf-8"))
    except ValueError:
        return ""
    if not isinstance(obj, dict):
        return ""
    kind = obj.get("type")
    return kind if isinstance(kind, str) else ""


class _Replay:
    def __init__(self, lines: Iterator[bytes], out: BinaryIO, inp: BinaryIO, exit_code: int) -> None:
        # The first lines are read ahead for the session id; the rest stream from the file as turns are played.
        self.head = list(itertools.islice(lines, 50))
        self.lines = itertools.chain(self.head, lines)
        self.pending: bytes | None = next(self.lines, None)
        self.out = out
        self.inp = inp
        self.exit_code = exit_code
        self.session_id = self._session_id()

    def _session_id(self) -> str:
        for line in itertools.islice((line for piece in self.head for line in piece.split(b"\n")), 50):
            try:
                obj = loads(line.decode("utf-8"))
            except ValueError:
                continue
            if isinstance(obj, dict) and isinstance(obj.get("session_id"), str):
                return str(obj["session_id"])
        return "replay-session"

    def _write(self, data: bytes) -> None:
        self.out.write(data)

    def _send(self, obj: dict[str, Any]) -> None:
        self._write(dumps(obj).encode("utf-8", "surrogateescape") + b"\n")
        self.out.flush()

    def _read(self) -> dict[str, Any] | None:
        """The next JSON object from stdin (answering control requests on the way); None at EOF."""
        while True:
            line = self.inp.readline()
            if not line:
                return None
            if not line.strip():
                continue
            try:
                obj = loads(line.decode("utf-8"))
            except ValueError:
                sys.stderr.write(f"Error parsing streaming input line: {line[:200]!r}\n")
                sys.exit(1)
            if not isinstance(obj, dict):
                continue
            if obj.get("type") == "control_request":
                rid = obj.get("request_id", "")
                self._send(
                    {"type": "control_response", "response": {"subtype": "success", "request_id": rid, "response": {}}}
                )
                continue
            return obj

    def _echo(self, msg: dict[str, Any]) -> None:
        echo = {
            "type": "user",
            "message": msg.get("message"),
            "session_id": self.session_id,
            "parent_tool_use_id": None,
            "uuid": msg.get("uuid", ""),
            "isReplay": True,
        }
        self._send(echo)

    def _turn(self) -> bool:
        """Print recorded lines through the next result; False when the recording ended without one."""
        buf: list[bytes] = []
        size = 0
        while self.pending is not None:
            line = self.pending
            self.pending = next(self.lines, None)
            kind = _kind(line)
            buf.append(line)
            size += len(line) + 1
            if kind == "control_request":
                self._flush(buf)
                size = 0
                if not self._await_answer():
                    return False
                continue
            if kind == "result":
                self._flush(buf)
                return True
            if size >= 1 << 16:
                self._flush(buf)
                size = 0
        self._flush(buf)
        return False

    def _flush(self, buf: list[bytes]) -> None:
        if buf:
            buf.append(b"")
            self._write(b"\n".join(buf))
            self.out.flush()
            buf.clear()

    def _await_answer(self) -> bool:
        while True:
            obj = self._read()
            if obj is None:
                return False
            if obj.get("type") == "control_response":
                return True
            if obj.get("type") == "user":
                self._echo(obj)

    def run(self) -> int:
        while True:
            obj = self._read()
            if obj is None:
                return 0
            if obj.get("type") != "user":
                continue
            self._echo(obj)
            if self.pending is None:
                continue
            if not self._turn():
                return self.exit_code


def main(argv: list[str] | None = None) -> int:
    """Replay FIXTURE (the first argument) to stdout; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0].startswith("-"):
        sys.stderr.write("usage: python -m adaptor_nb.testing._replay FIXTURE [ignored CLI arguments...]\n")
        return 2
    exit_code = int(os.environ.get("ADAPTOR_NB_REPLAY_EXIT", "1"))
    replay = _Replay(_pieces(args[0]), sys.stdout.buffer, sys.stdin.buffer, exit_code)
    try:
        return replay.run()
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
