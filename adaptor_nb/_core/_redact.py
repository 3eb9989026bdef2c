"""Secrets never persist: the values a run must not keep, and the redaction of what the driver reports.

The secrets of a run are the driver's ``secret_env`` values, the values the services hand the CLI as secrets, and
every environment value (the process's, the driver's ``env``, the run's) under a name that says KEY, TOKEN,
SECRET or PASSWORD, unless the driver's ``public_env`` names it. The run context redacts each of them, as
``<redacted>``, from every event, raw stream, transcript item and outcome before the core keeps or publishes it,
so everything built from those (Results, thread stores, recordings, caches, views) holds redacted data.

Streams (text and thinking deltas, tool input deltas, stdout and stderr chunks) are redacted as streams: a value
split across chunks is found too. A stream holds back only the end of what it was given that could begin a secret
(at most ``len(secret) - 1`` characters) until the next chunk shows whether it does; the rest is flushed when the
stream ends (at turn end, before another kind of event, at the driver's end).
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import is_dataclass
from typing import Any, Generic, TypeVar

from .._events import Event, ProcessInfo, SubagentUpdate, TextDelta, Thinking, ToolCall

REDACTED = "<redacted>"
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD", re.IGNORECASE)
MIN_NAMED = 6  # a shorter value under a secret-looking name ("1", "true") is a setting, not a secret
MIN_EXPLICIT = 4  # a value the user marked secret

S = TypeVar("S", str, bytes)


def run_secrets(
    config: Any,
    *,
    env: Mapping[str, str] | None = None,
    explicit: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
) -> set[str]:
    """The secret values of a run of a driver configured by ``config`` (its ``secret_env``, ``env`` and
    ``public_env``), with the run's ``env``, further ``explicit`` secrets and the process environment."""
    public = set(getattr(config, "public_env", None) or ())
    found = {v for v in explicit if isinstance(v, str) and len(v) >= MIN_EXPLICIT}
    secret_env = getattr(config, "secret_env", None) or {}
    found.update(v for v in secret_env.values() if isinstance(v, str) and len(v) >= MIN_EXPLICIT)
    sources = (os.environ if environ is None else environ, getattr(config, "env", None) or {}, env or {})
    for source in sources:
        for name, value in source.items():
            if (
                name not in public
                and isinstance(value, str)
                and len(value) >= MIN_NAMED
                and SECRET_NAME.search(name) is not None
            ):
                found.add(value)
    return found


class _Stream(Generic[S]):
    """One stream's redaction: what is safe to pass on now, and the held-back end that may begin a secret."""

    __slots__ = ("held", "placeholder", "secrets", "spanned")

    def __init__(self, secrets: list[S], placeholder: S, empty: S) -> None:
        self.secrets: list[S] = secrets
        self.placeholder: S = placeholder
        self.held: S = empty
        self.spanned = False  # a secret was found across pieces

    def feed(self, chunk: S) -> S:
        held = self.held
        buf = held + chunk if held else chunk
        for secret in self.secrets:
            if secret in buf:
                buf = buf.replace(secret, self.placeholder)
                self.spanned = self.spanned or bool(held)
        keep = _open_prefix(buf, self.secrets)
        if keep:
            self.held = buf[-keep:]
            return buf[:-keep]
        self.held = buf[:0]
        return buf

    def flush(self) -> S:
        held, self.held = self.held, self.held[:0]
        return held


def _open_prefix(buf: S, secrets: list[S]) -> int:
    """The length of the longest end of ``buf`` that is a proper beginning of a secret (0 if none)."""
    best = 0
    for secret in secrets:
        window = min(len(secret) - 1, len(buf))
        if window <= best:
            continue
        tail = buf[-window:]
        first = secret[:1]
        i = tail.find(first)
        while i != -1 and window - i > best:
            if secret.startswith(tail[i:]):
                best = window - i
                break
            i = tail.find(first, i + 1)
    return best


# Events whose field carries a piece of a stream, and how pieces of one stream are told apart.
_STREAMED: dict[type[Event], tuple[str, tuple[str, ...]]] = {
    TextDelta: ("text", ("message_id", "role", "phase")),
    Thinking: ("text", ("message_id", "phase")),
    ToolCall: ("args_delta", ("id",)),
    SubagentUpdate: ("delta", ("task", "member")),
    ProcessInfo: ("text", ("kind",)),
}
_TEXT_ONLY = (TextDelta, Thinking)


class Redaction:
    """The redaction of one run: whole values, events (streamed fields as streams) and the raw streams."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets: list[str] = []
        self._bytes: list[bytes] = []
        self._streams: dict[tuple[Any, ...], tuple[_Stream[str], Event]] = {}
        self.spanned = False  # an event stream had a secret across pieces: the raw frames may too
        self.stdout: _Stream[bytes]
        self.stderr: _Stream[bytes]
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        """Redact ``secrets`` too (from here on)."""
        known = set(self.secrets)
        for s in secrets:
            if s and s not in known:
                known.add(s)
        self.secrets[:] = sorted(known, key=len, reverse=True)  # a longer secret first: its parts are not cut
        forms: set[bytes] = set()
        for s in self.secrets:
            forms.add(s.encode("utf-8", "surrogatepass"))
            forms.add(json.dumps(s)[1:-1].encode())  # as it appears inside a JSON string
        self._bytes[:] = sorted(forms, key=len, reverse=True)
        if not hasattr(self, "stdout"):
            self.stdout = _Stream(self._bytes, REDACTED.encode(), b"")
            self.stderr = _Stream(self._bytes, REDACTED.encode(), b"")

    def __bool__(self) -> bool:
        return bool(self.secrets)

    # -- whole values ------------------------------------------------------------------------------------

    def text(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def data(self, data: bytes) -> bytes:
        for secret in self._bytes:
            if secret in data:
                data = data.replace(secret, REDACTED.encode())
        return data

    def value(self, value: Any) -> Any:
        """``value`` with every secret in its strings redacted: the same object when it holds none."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bytes):
            return self.data(value)
        if isinstance(value, dict):
            out = {self.value(k): self.value(v) for k, v in value.items()}
            if len(out) == len(value) and all(k in value and out[k] is value[k] for k in out):
                return value
            return out
        if isinstance(value, list | tuple):
            items = [self.value(v) for v in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return items if isinstance(value, list) else tuple(items)
        if isinstance(value, BaseException):
            self.exception(value)
            return value
        if is_dataclass(value) and not isinstance(value, type) and hasattr(value, "__dict__"):
            return self._object(value)
        return value

    def _object(self, obj: Any) -> Any:
        changed = {}
        for name, field_value in vars(obj).items():
            if name == "meta":
                continue
            new = self.value(field_value)
            if new is not field_value:
                changed[name] = new
        if not changed:
            return obj
        out = copy.copy(obj)
        out.__dict__.update(changed)
        return out

    def exception(self, exc: BaseException) -> None:
        """Redact an exception's message and string attributes in place."""
        exc.args = tuple(self.value(a) for a in exc.args)
        for name, attr in list(vars(exc).items()):
            if isinstance(attr, str | dict | list | tuple):
                new = self.value(attr)
                if new is not attr:
                    setattr(exc, name, new)

    # -- events ------------------------------------------------------------------------------------------

    def event(self, event: Event) -> list[Event]:
        """What to publish for ``event``: the streams it ends, flushed, then the event redacted (nothing when all
        of a text delta is held back)."""
        spec = _STREAMED.get(type(event))
        if spec is None:
            out = self.flush()
            out.append(self.value(event))
            return out
        name, keys = spec
        piece = getattr(event, name)
        if not isinstance(piece, str):
            return [self.value(event)]
        key = (type(event), *(getattr(event, k) for k in keys))
        entry = self._streams.get(key)
        stream = entry[0] if entry is not None else _Stream(self.secrets, REDACTED, "")
        safe = stream.feed(piece)
        self.spanned = self.spanned or stream.spanned
        if stream.held:
            self._streams[key] = (stream, event)
        elif entry is not None:
            del self._streams[key]
        # A text or thinking delta's other fields are ids and enums: only the streamed text can hold a secret.
        redacted = event if type(event) in _TEXT_ONLY else self._object_except(event, name)
        if safe == piece and redacted is event:
            return [event]
        if not safe and isinstance(event, TextDelta | Thinking):
            return []  # all of it may begin a secret: it goes out with the next piece or at the flush
        piece_event = copy.copy(redacted)
        piece_event.__dict__[name] = safe
        return [piece_event]

    def _object_except(self, event: Event, name: str) -> Event:
        held = event.__dict__[name]
        probe = copy.copy(event)
        probe.__dict__[name] = ""
        out = self._object(probe)
        if out is probe:
            return event
        out.__dict__[name] = held
        return out  # type: ignore[no-any-return]

    def flush(self) -> list[Event]:
        """The held-back ends of every event stream, as events like the last of each stream."""
        out: list[Event] = []
        for stream, last in self._streams.values():
            held = stream.flush()
            if held:
                ev = self.value(copy.copy(last))
                ev.__dict__[_STREAMED[type(last)][0]] = held
                out.append(ev)
        self._streams.clear()
        return out
