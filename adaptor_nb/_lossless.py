"""JSON text for any Python string, lone surrogates included, written as valid UTF-8 and read back unchanged.

A CLI can write bytes that are not UTF-8 (kept in a ``str`` as the surrogates U+DC80 to U+DCFF that the
``surrogateescape`` error handler decodes them to) or a JSON string with a lone surrogate escape such as
``"\\ud83d"`` (a JavaScript CLI cutting a string in the middle of an emoji). ``json.dumps(..., ensure_ascii=False)``
copies such a surrogate into its text as it is, and that text cannot be encoded as UTF-8; here every surrogate is
written as its ``\\uXXXX`` escape instead, which ``json.loads`` reads back as the same character.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
_OTHER_SURROGATES = re.compile("([\ud800-\udc7f\udd00-\udfff]+)")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def escape_surrogates(json_text: str) -> str:
    """``json_text`` (as ``json.dumps`` writes it, where a surrogate can only be inside a string) with each
    surrogate as its escape."""
    return _SURROGATE.sub(_escape, json_text) if _SURROGATE.search(json_text) else json_text


def dumps(value: Any, *, compact: bool = True) -> str:
    """``json.dumps(value, ensure_ascii=False)`` that is always valid UTF-8 (compact separators by default)."""
    separators = (",", ":") if compact else None
    return escape_surrogates(json.dumps(value, ensure_ascii=False, separators=separators))


def has_raw_bytes(text: str) -> bool:
    """Whether ``text`` holds bytes that were not UTF-8 (decoded with ``surrogateescape``)."""
    return _ESCAPED_BYTE.search(text) is not None


def to_bytes(text: str) -> bytes:
    """``text`` as the bytes it was decoded from with ``surrogateescape`` (any other surrogate as its 3-byte form)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        parts = _OTHER_SURROGATES.split(text)  # odd parts: surrogates that escape no byte
        return b"".join(p.encode("utf-8", "surrogatepass" if i % 2 else "surrogateescape") for i, p in enumerate(parts))
