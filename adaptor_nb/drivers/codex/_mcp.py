"""MCP servers for ``codex app-server`` as ``-c mcp_servers.<name>=...`` overrides, secrets passed by reference.

Codex merges overrides into ``config.toml`` key by key, so a set replaces the home's servers by disabling the
ones it does not name; a home server with the same name as a declared one is refused (the merge would mix them).
"""

from __future__ import annotations

import os
import sys
import tomllib
from typing import Any

from ...driver import (
    MCP_LAUNCHER,
    HostedTools,
    InvalidMCPConfigError,
    Server,
    Stdio,
    secret_var,
)
from ._home import toml_key, toml_value

# Codex 0.171 speaks stdio and streamable HTTP; it has no SSE client.
TRANSPORTS = frozenset({"stdio", "http"})
_LAUNCHER = MCP_LAUNCHER


def home_servers(codex_home: str) -> list[str]:
    """The MCP server names ``codex_home/config.toml`` declares (none when it is missing or unreadable)."""
    try:
        with open(os.path.join(codex_home, "config.toml"), "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError):
        return []
    servers = data.get("mcp_servers")
    return sorted(str(k) for k in servers) if isinstance(servers, dict) else []


def mcp_overrides(servers: tuple[Server, ...] | None, codex_home: str) -> tuple[list[str], dict[str, str]]:
    """``-c`` arguments for ``servers`` and the private environment holding their secret values.

    None leaves Codex's own MCP configuration alone.
    """
    if servers is None:
        return [], {}
    declared = {s.name for s in servers}
    existing = home_servers(codex_home)
    clash = sorted(declared.intersection(existing))
    if clash:
        raise InvalidMCPConfigError(
            f"mcp server {clash[0]!r} is also declared in {os.path.join(codex_home, 'config.toml')}; Codex merges "
            "the two field by field, so give the server another name",
            option="mcp",
            details={"server": clash[0], "field": "name"},
        )
    argv: list[str] = []
    for name in existing:
        argv += ["-c", f"mcp_servers.{toml_key(name)}.enabled=false"]
    secrets: dict[str, str] = {}
    for s in servers:
        entry: dict[str, Any]
        if isinstance(s, Stdio):
            entry = {"command": s.command, "args": list(s.args)}
            if s.env:
                # Codex forwards variables by name only (env_vars), so a launcher renames private ones.
                pairs = []
                for k, v in s.env.items():
                    private = secret_var(s.name, "env", k)
                    secrets[private] = v
                    pairs.append(f"{k}={private}")
                entry = {
                    "command": sys.executable,
                    "args": ["-I", _LAUNCHER, *pairs, "--", s.command, *s.args],
                    "env_vars": [p.split("=", 1)[1] for p in pairs],
                }
        else:
            entry = {"url": s.url}
            if s.headers:
                refs = {k: secret_var(s.name, "header", k) for k in s.headers}
                secrets.update({refs[k]: v for k, v in s.headers.items()})
                entry["env_http_headers"] = refs
            if s.bearer_token_env:
                entry["bearer_token_env_var"] = s.bearer_token_env
        entry["enabled"] = True
        if s.required:
            entry["required"] = True
        argv += ["-c", f"mcp_servers.{toml_key(s.name)}={toml_value(entry)}"]
    return argv, secrets


def hosted_overrides(hosted: HostedTools) -> tuple[list[str], dict[str, str]]:
    """``-c`` arguments attaching the Agent's tool server over streamable HTTP, the token read from ``token_env``.

    ``tool_timeout_sec`` follows the tools' own timeouts, so Codex's 60 s default does not cut a long call off.
    The server's tools are pre-approved (``default_tools_approval_mode="approve"``) except those declared with
    ``requires_approval=True`` (``approval_mode="prompt"``), which reach the run's approval policy.
    ``supports_parallel_tool_calls`` lets calls the model makes in one step run concurrently (Codex runs an MCP
    server's calls one at a time otherwise).
    """
    entry: dict[str, Any] = {
        "url": hosted.url,
        "bearer_token_env_var": hosted.token_env,
        "enabled": True,
        "required": True,
    }
    entry["tool_timeout_sec"] = hosted.call_timeout
    entry["default_tools_approval_mode"] = "approve"
    entry["supports_parallel_tool_calls"] = True  # several calls in one model step run at once (Codex: serial)
    if hosted.approval:
        entry["tools"] = {name: {"approval_mode": "prompt"} for name in sorted(hosted.approval)}
    argv = ["-c", f"mcp_servers.{toml_key(hosted.server)}={toml_value(entry)}"]
    return argv, hosted.env
