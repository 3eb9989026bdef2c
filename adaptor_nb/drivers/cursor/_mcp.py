"""MCP for Cursor Agent: not wired yet.

Cursor reads MCP servers from ``.cursor/mcp.json`` in the workspace or in the user's home; writing either would
change files the user owns, so this driver declares no MCP transports and the core refuses ``mcp=`` before launch.
MCP calls that Cursor makes through servers the user configured are still reported (``mcpToolCall``).
"""

from __future__ import annotations

TRANSPORTS: frozenset[str] = frozenset()
