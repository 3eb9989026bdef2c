"""The cassette file: plain JSONL a reviewer can read and diff.

Line one is the header. Then, per recorded run, one ``run`` line (its key: cell, driver, thread and turn; the
prompt's and the options' SHA-256, a short preview of the prompt, and the processes it started), each followed
by the frames of the processes that run started: ``{"p": "p1", "out": {...}}`` for a JSON line the CLI printed
(``out_text`` for a line that is not JSON or not UTF-8), ``in`` / ``in_text`` for what the driver wrote, ``err``
for stderr,
``msg`` where the host sent a supplemental message (its text; the driver writes it as an ``in`` later), ``eof``
when the driver closed stdin and ``exit`` with the exit code. Any byte sequence is kept: a byte that is not UTF-8
is the escape of a surrogate from U+DC80 to U+DCFF in a text line (``surrogateescape``), a lone surrogate escape
in a JSON line stays one, so the file is valid UTF-8 and every line replays as the CLI wrote it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._lossless import dumps, has_raw_bytes

FORMAT = "adaptor_nb-cassette"
VERSION = 1
PREVIEW = 60


def digest(text: str) -> str:
    """The short SHA-256 a cassette keeps instead of a prompt or an option set."""
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def preview(prompt: str) -> str:
    """The start of a prompt, on one line, for error messages and reviewers."""
    flat = " ".join(prompt.split())
    return flat if len(flat) <= PREVIEW else flat[: PREVIEW - 1] + "…"


@dataclass(frozen=True)
class RunKey:
    """Where a run sits in the notebook (cell, driver, thread, turn) and what it asked (hashed)."""

    cell: str
    driver: str
    thread: str
    turn: int
    prompt: str
    options: str
    preview: str = ""

    @property
    def place(self) -> tuple[str, str, str, int]:
        return (self.cell, self.driver, self.thread, self.turn)

    def where(self) -> str:
        """The run's place in words: "agent cell 4, thread 'review' turn 2 (claude)"."""
        cell = self.cell or "the script"
        thread = f"thread {self.thread!r} turn {self.turn}" if self.thread else f"send {self.turn}"
        return f"{cell}, {thread} ({self.driver})"


@dataclass
class Recording:
    """One recorded run: its key and the frames of each process it started, in the order they were started."""

    key: RunKey
    processes: list[list[dict[str, Any]]] = field(default_factory=list)


def frame_line(pid: str, frame: dict[str, Any]) -> dict[str, Any]:
    """A tee/player frame (``{"k", "b"}``) as a cassette line."""
    kind = frame["k"]
    line: dict[str, Any] = {"p": pid}
    if kind in ("in", "out"):
        text = str(frame.get("b", ""))
        try:
            if has_raw_bytes(text):  # not UTF-8: kept as the text it is, so its bytes replay unchanged
                raise ValueError(text)
            line[kind] = json.loads(text)
        except ValueError:
            line[f"{kind}_text"] = text
        if frame.get("nl") is False:
            line["nl"] = False
    elif kind in ("err", "msg"):
        line[kind] = str(frame.get("b", ""))
    elif kind == "eof":
        line["eof"] = True
    elif kind == "exit":
        line["exit"] = int(frame.get("rc", 0))
    return line


def player_frame(line: dict[str, Any]) -> dict[str, Any]:
    """A cassette frame line back in the player's form."""
    for kind in ("in", "out"):
        if kind in line:
            frame: dict[str, Any] = {"k": kind, "b": dumps(line[kind])}
        elif f"{kind}_text" in line:
            frame = {"k": kind, "b": str(line[f"{kind}_text"]), "t": True}  # a line that is not JSON
        else:
            continue
        if line.get("nl") is False:
            frame["nl"] = False
        return frame
    for kind in ("err", "msg"):
        if kind in line:
            return {"k": kind, "b": str(line[kind])}
    if "eof" in line:
        return {"k": "eof"}
    return {"k": "exit", "rc": int(line.get("exit", 0))}


def dump(recordings: list[Recording]) -> str:
    """The cassette text for ``recordings`` (processes renumbered p1, p2, ... in file order)."""
    out = [json.dumps({"cassette": FORMAT, "version": VERSION})]
    n = 0
    for rec in recordings:
        k = rec.key
        pids = [f"p{n + i + 1}" for i in range(len(rec.processes))]
        run = {
            "run": {"cell": k.cell, "driver": k.driver, "thread": k.thread, "turn": k.turn},
            "prompt_sha256": k.prompt,
            "options_sha256": k.options,
            "prompt": k.preview,
            "processes": pids,
        }
        out.append(dumps(run, compact=False))
        for pid, frames in zip(pids, rec.processes, strict=True):
            out.extend(dumps(frame_line(pid, f)) for f in frames)
        n += len(pids)
    return "\n".join(out) + "\n"


def load(path: Path) -> list[Recording]:
    """The recordings in the cassette at ``path`` (none if it does not exist)."""
    if not path.exists():
        return []
    recordings: list[Recording] = []
    frames: dict[str, list[dict[str, Any]]] = {}
    with path.open(encoding="utf-8") as fh:
        for number, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: not a JSON line ({exc})") from None
            if "cassette" in line:
                if line.get("cassette") != FORMAT:
                    raise ValueError(f"{path}: not an adaptor_nb cassette")
                continue
            if "run" in line:
                where = line["run"]
                key = RunKey(
                    cell=str(where.get("cell", "")),
                    driver=str(where.get("driver", "")),
                    thread=str(where.get("thread", "")),
                    turn=int(where.get("turn", 0)),
                    prompt=str(line.get("prompt_sha256", "")),
                    options=str(line.get("options_sha256", "")),
                    preview=str(line.get("prompt", "")),
                )
                rec = Recording(key)
                for pid in line.get("processes", []):
                    frames[pid] = []
                    rec.processes.append(frames[pid])
                recordings.append(rec)
            elif "p" in line:
                frames.setdefault(str(line["p"]), []).append(player_frame(line))
    return recordings


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step (a reader never sees half a cassette)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
