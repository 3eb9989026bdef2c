"""What a cassette must not keep: secrets, absolute paths, fresh identifiers and durations.

Secrets become ``<secret>``; the working directory and HOME become ``<cwd>`` and ``<home>`` (put back on replay,
so tools see real paths); every UUID becomes a stable placeholder numbered in order of first appearance, the
same one everywhere in the cassette (so a session id the driver resumes still matches); numbers under keys
that hold durations or clock readings become 0.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._core._redact_frames import mask_chunks, mask_split
from .._lossless import has_raw_bytes

SECRET = "<secret>"
CWD = "<cwd>"
HOME = "<home>"
PLACEHOLDER_PREFIX = "00000000-0000-4000-8000-"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_PROVIDER_ID = re.compile(r"\b(msg|toolu|req|call|item|resp|rs|fc|srvtoolu)_([0-9A-Za-z]{16,})\b")
_VOLATILE_KEY = re.compile(
    r"duration|elapsed|latency|ttft|time_to|created_?at|updated_?at|timestamp|started_?at", re.IGNORECASE
)
MIN_SECRET = 6


def secret_values(env: Mapping[str, str] | None, extra: Iterable[str] = ()) -> set[str]:
    """Environment values under secret-looking names, plus ``extra`` (a driver's ``secret_env`` values)."""
    found = {v for v in extra if len(v) >= MIN_SECRET}
    for name, value in (env or {}).items():
        if _SECRET_NAME.search(name) and len(value) >= MIN_SECRET:
            found.add(value)
    return found


def _escaped(text: str) -> str:
    return json.dumps(text, ensure_ascii=True)[1:-1]


_DIR_NAME = re.compile(r"(HOME|DIR|ROOT)$")
_TOKEN = re.compile(r"<(cwd|home|\$[A-Za-z_][A-Za-z0-9_]*)>")  # what restore puts paths back for
_ISO_TIME = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z?\b")


def path_pairs(cwd: str, home: str, env: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(escaped path, token) pairs to replace, longest path first, for both the given and the resolved form.

    Besides the working directory and HOME, every absolute directory in a ``*_HOME`` / ``*_DIR`` / ``*_ROOT``
    variable (``CODEX_HOME``) becomes ``<$NAME>``."""
    pairs: dict[str, str] = {}
    named = [(v, f"<${k}>") for k, v in (env or {}).items() if _DIR_NAME.search(k) and k != "HOME" and os.path.isabs(v)]
    for path, token in [*named, (home, HOME), (cwd, CWD)]:
        if not path or path == os.sep:
            continue
        for form in {path.rstrip(os.sep), os.path.realpath(path).rstrip(os.sep)}:
            if form:
                pairs[_escaped(form)] = token
    return sorted(pairs.items(), key=lambda kv: -len(kv[0]))


class Scrubber:
    """Scrubs the JSON text of frames; one per cassette so placeholders stay consistent across processes."""

    def __init__(self, start: int = 0) -> None:
        self.ids: dict[str, str] = {}
        self.next = start

    def placeholder(self, value: str) -> str:
        if value.startswith(PLACEHOLDER_PREFIX):
            return value
        key = value.lower()
        if key not in self.ids:
            self.next += 1
            self.ids[key] = f"{PLACEHOLDER_PREFIX}{self.next:012d}"
        return self.ids[key]

    def text(self, text: str, secrets: Iterable[str], paths: list[tuple[str, str]]) -> str:
        """``text`` (JSON or not) with secrets, paths and UUIDs replaced."""
        for secret in sorted(secrets, key=len, reverse=True):
            text = text.replace(_escaped(secret), SECRET)
        for path, token in paths:
            text = text.replace(path, token)
        text = _UUID.sub(lambda m: self.placeholder(m.group(0)), text)
        return _PROVIDER_ID.sub(lambda m: self.provider_id(m.group(1), m.group(2)), text)

    def provider_id(self, prefix: str, value: str) -> str:
        """A stable stand-in for a provider's random id (``msg_…``, ``toolu_…``), keeping its prefix."""
        if value.startswith("0000"):
            return f"{prefix}_{value}"
        key = f"{prefix}_{value}"
        if key not in self.ids:
            self.next += 1
            self.ids[key] = f"{prefix}_{self.next:020d}"
        return self.ids[key]


def volatile(obj: Any) -> Any:
    """``obj`` with numbers under duration and clock keys set to 0, and image bytes (base64 sources, ``data:image``
    URLs) replaced by their SHA-256 (see ``image_digest``)."""
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for k, v in obj.items():
            if _VOLATILE_KEY.search(k) and isinstance(v, int | float) and not isinstance(v, bool):
                out[k] = 0
            elif isinstance(v, str):
                out[k] = image_digest(k, v, obj)
            else:
                out[k] = volatile(v)
        return out
    if isinstance(obj, list):
        return [volatile(v) for v in obj]
    return obj


def _sha256_of_base64(data: str) -> str:
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raw = data.encode("utf-8", "surrogateescape")
    return hashlib.sha256(raw).hexdigest()


def image_digest(key: str, value: str, owner: dict[str, Any]) -> str:
    """An image's bytes in a recorded frame, replaced by their SHA-256: a cassette keeps what identifies the image,
    not the image (``data`` of a base64 image source becomes ``sha256:<hex>``; a ``data:image/...;base64,`` URL
    becomes ``data:image/...;sha256,<hex>``). Any other string is returned as it is."""
    if (
        key == "data"
        and owner.get("type") == "base64"
        and str(owner.get("media_type", "")).startswith("image/")
        and not value.startswith("sha256:")
    ):
        return "sha256:" + _sha256_of_base64(value)
    if value.startswith("data:image/") and ";base64," in value:
        head, _, data = value.partition(";base64,")
        return f"{head};sha256,{_sha256_of_base64(data)}"
    return value


def highest_placeholder(text: str) -> int:
    """The largest placeholder number used in ``text`` (0 if none)."""
    numbers = [int(m.group(1)) for m in re.finditer(re.escape(PLACEHOLDER_PREFIX) + r"(\d{12})", text)]
    numbers += [int(m.group(2)) for m in _PROVIDER_ID.finditer(text) if m.group(2).isdigit()]
    return max(numbers, default=0)


def restore(text: str, cwd: str, home: str, env: Mapping[str, str] | None = None) -> str:
    """Put the replaying machine's paths back where the recording has ``<cwd>``, ``<home>`` and ``<$NAME>``."""
    return restorer(cwd, home, env)(text)


def restorer(cwd: str, home: str, env: Mapping[str, str] | None = None) -> Callable[[str], str]:
    """``restore`` for one machine's paths: their JSON forms worked out once, the text searched once (a replay
    restores every burst of output it plays)."""
    paths = {name: _escaped(path.rstrip(os.sep)) for name, path in (("cwd", cwd), ("home", home)) if path}
    values = env or {}

    def token(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in paths:
            variable = name[1:] if name.startswith("$") else ""
            paths[name] = _escaped(values[variable]) if variable and values.get(variable) else match.group(0)
        return paths[name]

    def put_back(text: str) -> str:
        return _TOKEN.sub(token, text) if "<" in text else text

    return put_back


def clock_times(text: str) -> str:
    """``text`` (a CLI's log lines) with ISO-8601 clock readings set to a fixed one."""
    return _ISO_TIME.sub("2000-01-01T00:00:00Z", text)


def split_secrets(frames: list[dict[str, Any]], secrets: Iterable[str]) -> list[dict[str, Any]]:
    """``frames`` of one process with every secret cut across frames replaced: pieces in one field of consecutive
    stdout frames (text streamed as deltas) and pieces across stderr writes. A frame kept as raw bytes stays whole."""
    order = sorted(secrets, key=len, reverse=True)
    if not order:
        return frames
    outs = [f for f in frames if f.get("k") == "out" and isinstance(f.get("b"), str) and not has_raw_bytes(f["b"])]
    for frame, text in zip(outs, mask_split([f["b"] for f in outs], order, SECRET), strict=True):
        frame["b"] = text
    errs = [f for f in frames if f.get("k") == "err" and isinstance(f.get("b"), str)]
    for frame, text in zip(errs, mask_chunks([f["b"] for f in errs], order, SECRET), strict=True):
        frame["b"] = text
    return frames
