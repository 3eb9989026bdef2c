"""The check made before launch for ``mcp=``: well-formed declarations, transports the driver declares."""

from __future__ import annotations

from typing import Any

from .._errors import MCPTransportUnsupportedError, MCPUnsupportedError
from ..driver._spi import Descriptor
from ..mcp import Server, validate_servers


def check_mcp(servers: tuple[Any, ...] | None, desc: Descriptor) -> tuple[Server, ...] | None:
    """The validated set (None: inherit the CLI's own setup); raises a ConfigError with ``option="mcp"``."""
    if servers is None:
        return None
    checked = validate_servers(servers)
    if checked and not desc.mcp:
        names = ", ".join(s.name for s in checked)
        raise MCPUnsupportedError(
            f"driver {desc.name!r} cannot attach MCP servers (asked for: {names}); remove mcp= or use mcp=[]",
            option="mcp",
        )
    for server in checked:
        if server.transport not in desc.mcp:
            raise MCPTransportUnsupportedError(
                f"driver {desc.name!r} cannot use the {server.transport} transport of mcp server {server.name!r}; "
                f"it supports: {', '.join(sorted(desc.mcp))}",
                option="mcp",
                details={"server": server.name, "transport": server.transport},
            )
    return checked
