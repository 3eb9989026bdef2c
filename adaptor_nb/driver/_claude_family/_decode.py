"""Stdout bytes of a Claude-family CLI as frames: the one place a line, and a text delta, is decoded."""

from __future__ import annotations

import asyncio
import json.decoder
import re
from collections.abc import Callable
from typing import Any

from .._jsonline import loads_line

# Kinds of inbox items (the first element of each tuple).
LINES = 0  # (LINES, raw chunk, [Frame, ...]): decoded stdout lines
STDERR = 1  # (STDERR, chunk)
EOF = 2  # (EOF, return code)
WAKE = 3  # (WAKE, owner, payload): a wake-up posted by the run that reads the inbox

_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

# A decoded stdout line: a JSON object; the bytes of a line that is not a JSON object; or, for the commonest line
# of all (a top-level text delta in exactly the CLI's own layout), ``(block index, [text, ...])`` without the dicts:
# consecutive such lines of one content block share one frame, their texts in order.
Frame = dict[str, Any] | bytes | tuple[int, list[str]]

# The layout Claude Code writes a top-level text delta in. Only a line that matches it whole takes the short cut;
# the text itself is decoded by the json module's own string scanner, so escapes and validation are the same.
_DELTA_HEAD = '{"type":"stream_event","event":{"type":"content_block_delta","index":'
_DELTA_MID = ',"delta":{"type":"text_delta","text":"'
_DELTA_TAIL = re.compile(
    r'\}\},"session_id":"[^"\\\x00-\x1f]*","parent_tool_use_id":null,"uuid":"[^"\\\x00-\x1f]*"\}'
).fullmatch
# A long line whose first non-blank byte is not ``{`` is not a frame; it is not decoded (that would copy it twice).
_BIG_LINE = 1 << 20
_NOT_AN_OBJECT = re.compile(rb"[ \t\r]*[^{ \t\r]").match


def decode_block(block: bytes, waiters: dict[str, asyncio.Future[dict[str, Any]]]) -> tuple[list[Frame], str]:
    """Decode complete stdout lines into frames (see ``Frame``), and the session id of an ``init`` line among them.

    A ``control_response`` that answers one of ``waiters`` resolves it and is not passed on.
    """
    if len(block) > _BIG_LINE and _NOT_AN_OBJECT(block) is not None and block.find(b"\n") < 0:
        return [block], ""  # one long line that cannot be a JSON object: passed on as it is, never decoded
    try:
        lines: list[str] = block.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        lines = [line.decode("utf-8", "surrogateescape") for line in block.split(b"\n")]
    out: list[Frame] = []
    append = out.append
    session_id = ""
    decode = loads_line
    head, head_len, mid, mid_len = _DELTA_HEAD, len(_DELTA_HEAD), _DELTA_MID, len(_DELTA_MID)
    run: tuple[int, list[str]] | None = None  # the text-delta frame the next delta of the same block joins
    for line in lines:
        if not line:
            continue
        if line.startswith(head):
            comma = line.find(",", head_len)
            index = line[head_len:comma]
            if (
                index.isascii()
                and index.isdigit()
                and (index == "0" or index[0] != "0")
                and line.startswith(mid, comma)
            ):
                try:
                    text, end = _scanstring(line, comma + mid_len)
                except ValueError:
                    pass
                else:
                    if _DELTA_TAIL(line, end) is not None:
                        block_index = int(index)
                        if run is not None and run[0] == block_index:
                            run[1].append(text)
                        else:
                            run = (block_index, [text])
                            append(run)
                        continue
        run = None
        try:
            obj = decode(line)  # exactly as json.loads reads it; over-deep nesting is a bad line, not a dead reader
        except ValueError:
            append(line.encode("utf-8", "surrogateescape"))
            continue
        if type(obj) is not dict:
            append(line.encode("utf-8", "surrogateescape"))
            continue
        kind = obj.get("type")
        if kind == "control_response" and waiters:
            resp = obj.get("response")
            rid = resp.get("request_id") if isinstance(resp, dict) else None
            fut = waiters.pop(rid, None) if isinstance(rid, str) else None
            if fut is not None and isinstance(resp, dict):
                if not fut.done():
                    fut.set_result(resp)
                continue
        elif kind == "system" and obj.get("subtype") == "init":
            sid = obj.get("session_id")
            if isinstance(sid, str) and sid:
                session_id = sid
        append(obj)
    return out, session_id


def text_of(frame: dict[str, Any]) -> tuple[int, str] | None:
    """``(block index, text)`` of a top-level text delta decoded in full (a layout the short cut does not take).

    Together with ``decode_block``'s short cut this is where every top-level text delta is read: the run turns
    both into events in one place. A non-integer index reads as -1 and a non-string text as its ``str``.
    """
    if frame.get("parent_tool_use_id"):
        return None
    ev = frame.get("event")
    if type(ev) is not dict or ev.get("type") != "content_block_delta":
        return None
    delta = ev.get("delta")
    if type(delta) is not dict or delta.get("type") != "text_delta":
        return None
    index = ev.get("index", -1)
    text = delta.get("text")
    return (
        index if type(index) is int else -1,
        text if type(text) is str else "" if text is None else str(text),
    )
