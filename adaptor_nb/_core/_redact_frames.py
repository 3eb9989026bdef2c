"""Secrets cut across the frames of a JSON-lines stream: a CLI that streams text writes one piece per line.

The same field of consecutive frames (``event.delta.text`` of a stream of text deltas) is one stream: a secret whose
pieces end one frame's value and begin the next ones' is found in their concatenation. Its first piece becomes
``<redacted>`` and the other pieces are cut out, and only the frames that held a piece are written again (compact
JSON, ASCII escapes: lossless). Lines that are not JSON objects are left as they are.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, TypeVar

L = TypeVar("L", str, bytes)
REDACTED = "<redacted>"

_Leaf = tuple[int, tuple[Any, ...]]  # (frame index, path of keys and list indices to the string)


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))


def _set(obj: Any, path: tuple[Any, ...], value: str) -> None:
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


def mask_split(lines: list[L], secrets: list[str], placeholder: str = REDACTED) -> list[L]:
    """``lines`` with every secret cut across frames redacted (the same list when none is)."""
    if not secrets:
        return lines
    objs: dict[int, Any] = {}
    streams: dict[tuple[Any, ...], list[tuple[_Leaf, str]]] = {}
    for index, line in enumerate(lines):
        if line.lstrip()[:1] not in ("{", b"{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        objs[index] = obj
        for path, text in _leaves(obj):
            shape = tuple("#" if isinstance(k, int) else k for k in path)
            streams.setdefault(shape, []).append(((index, path), text))
    changed: dict[_Leaf, str] = {}
    for pieces in streams.values():
        if len(pieces) > 1:
            changed.update(_mask_pieces(pieces, secrets, placeholder))
    if not changed:
        return lines
    out = list(lines)
    for (index, path), text in changed.items():
        _set(objs[index], path, text)
    for index in {index for index, _ in changed}:
        text = json.dumps(objs[index], separators=(",", ":"))
        line = lines[index]
        if isinstance(line, bytes):
            out[index] = text.encode() + (b"\n" if line.endswith(b"\n") else b"")
        else:
            out[index] = text + ("\n" if line.endswith("\n") else "")
    return out


def mask_chunks(chunks: list[str], secrets: list[str], placeholder: str = REDACTED) -> list[str]:
    """``chunks`` of one text stream (stderr writes) with every secret cut across chunks redacted."""
    masked = _mask_pieces([((i, ()), c) for i, c in enumerate(chunks)], secrets, placeholder)
    return [masked.get((i, ()), c) for i, c in enumerate(chunks)]


def _mask_pieces(pieces: list[tuple[_Leaf, str]], secrets: list[str], placeholder: str) -> dict[_Leaf, str]:
    """The new values of the pieces a secret spans (only of secrets that span more than one piece)."""
    joined = "".join(text for _, text in pieces)
    starts: list[int] = []
    at = 0
    for _, text in pieces:
        starts.append(at)
        at += len(text)
    cuts: list[tuple[int, int]] = []
    for secret in secrets:
        i = joined.find(secret)
        while i != -1:
            cuts.append((i, i + len(secret)))
            i = joined.find(secret, i + len(secret))
    if not cuts:
        return {}
    out: dict[_Leaf, str] = {}
    for n, (leaf, text) in enumerate(pieces):
        lo, hi = starts[n], starts[n] + len(text)
        spans = [(a, b) for a, b in cuts if a < hi and b > lo]
        if not spans or all(a >= lo and b <= hi for a, b in spans):
            continue  # a secret whole inside one value is the ordinary redaction's
        kept, pos = [], lo
        for a, b in sorted(spans):
            if max(a, lo) < pos:
                continue  # overlaps a cut already made
            kept.append(joined[pos : max(a, lo)])
            kept.append(placeholder if a >= lo else "")  # the secret's first piece says so; the others go
            pos = min(b, hi)
        kept.append(joined[pos:hi])
        out[leaf] = "".join(kept)
    return out
