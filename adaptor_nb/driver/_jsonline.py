"""One line of a stream-json CLI: a stdout line decoded as ``json.loads`` decodes it, in about half the time, and a
stdin line encoded as compact ``json.dumps`` writes it, in a tenth of the time.

Lines are decoded with msgspec, which gives the same value as json for every line json reads, except that it
refuses a few json accepts: a number beyond a double's range (json: ``inf``), a lone surrogate escape, and json's
``NaN`` / ``Infinity``. Those lines go to ``json.loads``. A line nested too deeply for either is not JSON here
(ValueError), so a reader skips it instead of dying of a RecursionError.

Encoding with msgspec gives the same bytes as ``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))``
except for floats (the same value, written ``1e16`` where json writes ``1e+16``) and NaN or infinities (``null``:
json writes ``NaN``, which no JSON reader takes). What msgspec cannot encode (a ``True`` dict key, an integer
beyond 64 bits) goes to ``json.dumps``, which raises TypeError for what is not JSON at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _load_codecs() -> None:
    """Bind the codecs on first use, so importing the driver door does not load msgspec or json."""
    global _decode, _DecodeError, _EncodeError, _loads, _encode, _dumps
    import json

    import msgspec

    _decode = msgspec.json.Decoder().decode
    _DecodeError = msgspec.DecodeError
    _EncodeError = msgspec.EncodeError
    _loads = json.loads
    _encode = msgspec.json.Encoder().encode
    _dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _first_decode(line: str) -> Any:
    _load_codecs()
    return _decode(line)


def _first_encode(obj: Any) -> bytes:
    _load_codecs()
    return _encode(obj)


class _Unset(Exception):
    """Stands for the codec errors until the codecs are loaded (nothing raises it)."""


# Hot paths read these globals; the first call through ``_first_*`` rebinds them all to the real codecs.
_decode: Callable[[str], Any] = _first_decode
_DecodeError: type[Exception] = _Unset
_EncodeError: type[Exception] = _Unset
_loads: Callable[[str], Any] = _first_decode
_encode: Callable[[Any], bytes] = _first_encode
_dumps: Callable[[Any], str] = str


def loads_line(line: str) -> Any:
    """``json.loads(line)``; ValueError when ``line`` is not JSON or is nested too deeply to decode."""
    try:
        return _decode(line)
    except (_DecodeError, RecursionError):
        pass
    try:
        return _loads(line)
    except RecursionError:
        raise ValueError("nested too deeply to decode") from None


def dumps_line(obj: Any) -> bytes:
    """``obj`` as one line of compact JSON in UTF-8, newline included (see the module notes for floats)."""
    try:
        return _encode(obj) + b"\n"
    except (TypeError, OverflowError, _EncodeError):
        return _dumps(obj).encode() + b"\n"
