"""``json.loads`` and compact ``json.dumps`` without importing ``json``: for stand-in processes that must start fast.

The cassette player and the replay CLI start once per replayed process. Importing ``json`` (which imports ``re``,
``enum`` and more) takes about as long as the rest of their start, so they call json's C scanner and encoder
(``_json``) with json's own settings: the same values in, the same bytes out. Where ``_json`` is missing (not
CPython) the ``json`` package is used, at its import cost. Standard library only: the stand-ins run as scripts
with ``-I -S``, where the package is not importable, and import this file from the folder it is in.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported to run
if TYPE_CHECKING:
    from typing import Any

try:
    import _json
except ImportError:  # not CPython
    _json = None  # type: ignore[assignment]

__all__ = ["dumps", "loads"]

_WHITESPACE = " \t\n\r"


def _constant(name: str) -> float:
    return float(name.replace("Infinity", "inf"))  # NaN, Infinity, -Infinity, as json reads them


def _unserialisable(obj: object) -> object:
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


class _Reading:
    """What json's C scanner reads from its context: json.loads's defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_constant)


if _json is not None:
    _scan = _json.make_scanner(_Reading())  # type: ignore[arg-type]
    # json.dumps(obj, ensure_ascii=False, separators=(",", ":")), without the circular-reference check
    _encode = _json.make_encoder(None, _unserialisable, _json.encode_basestring, None, ":", ",", False, False, True)

    def loads(text: str) -> Any:
        """The JSON value of ``text`` (surrounding whitespace allowed); ValueError when it is not one."""
        start = len(text) - len(text.lstrip(_WHITESPACE))
        try:
            value, end = _scan(text, start)
        except StopIteration:
            raise ValueError("no JSON value") from None
        if text[end:].strip(_WHITESPACE):
            raise ValueError("extra data after the JSON value")
        return value

    def dumps(obj: Any) -> str:
        """``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))``."""
        return "".join(_encode(obj, 0))

else:
    import json

    def loads(text: str) -> Any:
        return json.loads(text)

    def dumps(obj: Any) -> str:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
