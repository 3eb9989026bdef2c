"""``--mcp-config`` for CodeBuddy Code: the door's shared MCP JSON (secrets as ``${VAR}`` references)."""

from __future__ import annotations

from ...driver import MCP_CONFIG_TRANSPORTS, mcp_config_args, required_mcp_failures

TRANSPORTS = MCP_CONFIG_TRANSPORTS
mcp_args = mcp_config_args
required_failures = required_mcp_failures

__all__ = ["TRANSPORTS", "mcp_args", "required_failures"]
