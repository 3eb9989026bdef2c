"""Builds Codex configuration: TOML values for ``-c key=value`` overrides and an isolated ``CODEX_HOME``."""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")

# Settings that keep Codex from any background network traffic (plugin sync, app connectors, analytics, OTLP).
OFFLINE_SETTINGS: dict[str, Any] = {
    "analytics": {"enabled": False},
    "features": {"plugins": False, "apps": False},
    "otel": {"exporter": "none", "metrics_exporter": "none", "trace_exporter": "none"},
    "check_for_update_on_startup": False,
}


def toml_value(value: Any) -> str:
    """Encode a Python value as an inline TOML value (strings, numbers, booleans, lists, tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot encode {type(value).__name__} as TOML")


def toml_key(key: str) -> str:
    """A TOML key, quoted when it is not a bare key."""
    return key if _BARE_KEY.match(key) else json.dumps(key)


def toml_document(data: Mapping[str, Any]) -> str:
    """Encode a nested mapping as a TOML document with ``[table]`` sections."""
    lines: list[str] = []
    _emit_table(lines, [], data)
    return "\n".join(lines).strip() + "\n"


def _emit_table(lines: list[str], path: list[str], data: Mapping[str, Any]) -> None:
    scalars = {k: v for k, v in data.items() if not isinstance(v, Mapping)}
    tables = {k: v for k, v in data.items() if isinstance(v, Mapping)}
    if path and (scalars or not tables):
        lines.append("")
        lines.append("[" + ".".join(toml_key(p) for p in path) + "]")
    for key, value in scalars.items():
        lines.append(f"{toml_key(key)} = {toml_value(value)}")
    for key, value in tables.items():
        _emit_table(lines, [*path, key], value)


def config_overrides(settings: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Flatten ``settings`` into ``-c dotted.key=<toml>`` arguments for the Codex command line."""
    args: list[str] = []
    for key, value in settings.items():
        dotted = f"{prefix}{toml_key(key)}"
        if isinstance(value, Mapping) and value:
            args.extend(config_overrides(value, dotted + "."))
        else:
            args.extend(["-c", f"{dotted}={toml_value(value)}"])
    return args


def provider_settings(
    *,
    base_url: str,
    model: str = "gpt-fake",
    provider_id: str = "fake",
    env_key: str = "FAKE_OPENAI_API_KEY",
    request_max_retries: int | None = None,
    stream_max_retries: int | None = None,
) -> dict[str, Any]:
    """Settings that make Codex use a Responses-compatible server at ``base_url`` with the key in ``env_key``."""
    provider: dict[str, Any] = {"name": provider_id, "base_url": base_url, "wire_api": "responses", "env_key": env_key}
    if request_max_retries is not None:
        provider["request_max_retries"] = request_max_retries
    if stream_max_retries is not None:
        provider["stream_max_retries"] = stream_max_retries
    return {"model": model, "model_provider": provider_id, "model_providers": {provider_id: provider}}


def write_codex_home(home: str | os.PathLike[str], settings: Mapping[str, Any], *, offline: bool = True) -> Path:
    """Create ``home`` with a ``config.toml`` holding ``settings`` (plus the offline settings) and return it."""
    path = Path(home)
    path.mkdir(parents=True, exist_ok=True)
    merged: dict[str, Any] = {}
    if offline:
        _deep_merge(merged, OFFLINE_SETTINGS)
    _deep_merge(merged, settings)
    (path / "config.toml").write_text(toml_document(merged), encoding="utf-8")
    return path


def _deep_merge(into: dict[str, Any], other: Mapping[str, Any]) -> None:
    for key, value in other.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _deep_merge(into[key], value)
        elif isinstance(value, Mapping):
            into[key] = {}
            _deep_merge(into[key], value)
        else:
            into[key] = value


def auth_source(env: Mapping[str, str]) -> str:
    """Where Codex would take its credentials from in ``env`` ("" when nothing is found).

    An API key in the environment, the login file ``auth.json`` in ``CODEX_HOME`` (default ``~/.codex``), or a
    custom ``model_provider`` in its ``config.toml`` (that provider names its own key).
    """
    for var in ("OPENAI_API_KEY", "CODEX_API_KEY"):
        if env.get(var):
            return var
    home = env.get("CODEX_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".codex")
    if os.path.isfile(os.path.join(home, "auth.json")):
        return "codex login"
    try:
        with open(os.path.join(home, "config.toml"), "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError):
        return ""
    provider = data.get("model_provider")
    providers = data.get("model_providers")
    if isinstance(provider, str) and provider and isinstance(providers, dict) and provider in providers:
        entry = providers[provider]
        key = entry.get("env_key") if isinstance(entry, dict) else None
        return f"model provider {provider!r}" + (f" ({key})" if isinstance(key, str) and key else "")
    return ""
