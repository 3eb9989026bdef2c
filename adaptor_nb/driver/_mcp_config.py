"""``--mcp-config`` for the CLIs that take Claude Code's MCP JSON (Claude Code, CodeBuddy Code).

The JSON names secret values as ``${VAR}`` references the CLI expands itself; the values travel in the CLI's
environment, never on its command line.
"""

from __future__ import annotations

import json
from typing import Any

from ..mcp import Server, Stdio
from ._hosted import HostedTools
from ._mcp import secret_var

MCP_CONFIG_TRANSPORTS = frozenset({"stdio", "http", "sse"})


def mcp_config_args(
    servers: tuple[Server, ...] | None, hosted: HostedTools | None = None
) -> tuple[list[str], dict[str, str]]:
    """The CLI arguments for ``servers`` and the private environment that carries their secret values.

    None leaves the CLI's own MCP configuration alone; any set (even empty) is strict: only these servers. The
    Agent's host tools (``hosted``) are added either way (their server survives ``mcp=[]``); the ones that need no
    approval are pre-allowed, so only ``requires_approval=True`` tools reach the permission flow.
    """
    if servers is None and hosted is None:
        return [], {}
    secrets: dict[str, str] = {}
    table: dict[str, Any] = {}
    extra: list[str] = []
    if hosted is not None:
        secrets.update(hosted.env)
        table[hosted.server] = {
            "type": "http",
            "url": hosted.url,
            "headers": {"Authorization": "Bearer ${" + hosted.token_env + "}"},
            # The tools' own timeouts bound a call: MCP_TOOL_TIMEOUT must not cut it off sooner.
            "timeout": int(hosted.call_timeout * 1000),
        }
        allowed = [hosted.cli_name(n) for n in hosted.names if n not in hosted.approval]
        if allowed:
            extra = ["--allowedTools", ",".join(allowed)]
    for s in servers or ():
        entry: dict[str, Any]
        if isinstance(s, Stdio):
            entry = {"type": "stdio", "command": s.command, "args": list(s.args)}
            if s.env:
                entry["env"] = {k: _ref(secrets, secret_var(s.name, "env", k), v) for k, v in s.env.items()}
        else:
            entry = {"type": s.transport, "url": s.url}
            headers = {k: _ref(secrets, secret_var(s.name, "header", k), v) for k, v in s.headers.items()}
            if s.bearer_token_env:
                headers["Authorization"] = "Bearer ${" + s.bearer_token_env + "}"
            if headers:
                entry["headers"] = headers
        table[s.name] = entry
    config = json.dumps({"mcpServers": table}, separators=(",", ":"), sort_keys=True)
    strict = ["--strict-mcp-config"] if servers is not None else []
    return ["--mcp-config", config, *strict, *extra], secrets


def _ref(secrets: dict[str, str], name: str, value: str) -> str:
    secrets[name] = value
    return "${" + name + "}"


def required_mcp_failures(frame: dict[str, Any], servers: tuple[Server, ...] | None) -> list[str]:
    """Required servers the ``init`` frame reports as not connected (``name (status)``)."""
    required = {s.name for s in servers or () if s.required}
    if not required:
        return []
    status = {
        str(e.get("name")): str(e.get("status") or "") for e in frame.get("mcp_servers") or () if isinstance(e, dict)
    }
    return [f"{n} ({status.get(n) or 'missing'})" for n in sorted(required) if status.get(n) != "connected"]


__all__ = ["MCP_CONFIG_TRANSPORTS", "mcp_config_args", "required_mcp_failures"]
