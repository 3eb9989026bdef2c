"""``--mcp-config`` for Claude Code: the door's shared MCP JSON (secrets as ``${VAR}`` references), with the
Agent's host tools declared as an SDK server: the CLI relays their MCP messages as ``mcp_message`` control requests
on its stdin/stdout, which the session answers in-process (no HTTP round trip, no bearer token)."""

from __future__ import annotations

import json
from typing import Any

from ...driver import HostedTools, Server, mcp_config_args

__all__ = ["mcp_args"]


def mcp_args(servers: tuple[Server, ...] | None, hosted: HostedTools | None) -> tuple[list[str], dict[str, str]]:
    """The CLI arguments for ``servers`` plus the host tools, and the private environment of the servers' secrets."""
    if hosted is None or hosted.serve is None:
        return mcp_config_args(servers, hosted)
    argv, secrets = mcp_config_args(servers if servers is not None else (), None)
    table: dict[str, Any] = json.loads(argv[1])["mcpServers"]
    # The tools' own timeouts bound a call: MCP_TOOL_TIMEOUT must not cut it off sooner.
    table[hosted.server] = {"type": "sdk", "name": hosted.server, "timeout": int(hosted.call_timeout * 1000)}
    args = ["--mcp-config", json.dumps({"mcpServers": table}, separators=(",", ":"), sort_keys=True)]
    if servers is not None:
        args.append("--strict-mcp-config")
    allowed = [hosted.cli_name(n) for n in hosted.names if n not in hosted.approval]
    if allowed:
        args += ["--allowedTools", ",".join(allowed)]
    return args, secrets
