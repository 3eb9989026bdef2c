"""Host tools as a driver sees them: one loopback MCP server of the Agent, reached with a bearer token.

The core fills :attr:`Invocation.tools`; a driver attaches the server to its CLI like any HTTP MCP server (the
token travels in the private environment variable ``token_env``, never on a command line) and reports the calls
under the tool's own name with ``details["host_tool"] = True``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from .._events import Event, ToolCall, ToolResult
from ..mcp import HTTP

__all__ = ["HOST_SERVER", "HostedTools", "ServeMessage", "mark_host_tool"]

HOST_SERVER = "pytools"
"""The MCP server name the CLIs see for host tools (so their own names are ``mcp__pytools__<tool>``)."""

E = TypeVar("E", bound=Event)

ServeMessage = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""In-process MCP: one JSON-RPC message in, its JSON-RPC reply out (None for a notification)."""


@dataclass(frozen=True)
class HostedTools:
    """The Agent's tool server for one run."""

    url: str
    token_env: str
    token: str = field(repr=False)
    names: tuple[str, ...] = ()
    approval: frozenset[str] = frozenset()
    """Tools whose calls must go through the approval flow (``requires_approval=True``)."""
    server: str = HOST_SERVER
    call_timeout: float = 86400.0
    """How long the CLI should wait for one call, in seconds: the tools' own timeouts bound the calls, so a CLI's
    shorter MCP timeout must not cut them off (the longest tool timeout plus a margin, or a day)."""
    serve: ServeMessage | None = field(default=None, repr=False, compare=False)
    """The same tools for this run without HTTP: a driver whose CLI carries MCP messages on its own channel
    (Claude Code's SDK servers) passes each message here and writes the reply back; no token is needed then."""
    failed: Callable[[str, str], bool] | None = field(default=None, compare=False, repr=False)
    """``failed(name, text)``: whether the host answered a call of tool ``name`` of this run with the error text
    ``text`` (each answer counted once), for a CLI that drops the MCP result's ``isError`` flag."""

    @property
    def declaration(self) -> HTTP:
        """The server as an ``mcp.HTTP`` declaration whose bearer token is read from ``token_env``."""
        return HTTP(self.server, self.url, bearer_token_env=self.token_env)

    @property
    def env(self) -> dict[str, str]:
        """The private environment the CLI needs (the token)."""
        return {self.token_env: self.token}

    def cli_name(self, name: str) -> str:
        """The name the CLI gives a host tool (``mcp__<server>__<tool>``)."""
        return f"mcp__{self.server}__{name}"

    def own_name(self, cli_name: str) -> str | None:
        """The tool's own name for a CLI tool name, or None when it is not one of these tools."""
        prefix = f"mcp__{self.server}__"
        if cli_name.startswith(prefix) and cli_name[len(prefix) :] in self.names:
            return cli_name[len(prefix) :]
        return None


def mark_host_tool(event: E, hosted: HostedTools | None) -> E:
    """``event`` with a host tool's own name and ``details["host_tool"]``; other events unchanged."""
    if hosted is None or not isinstance(event, ToolCall | ToolResult):
        return event
    own = hosted.own_name(event.name)
    if own is None:
        return event
    details: dict[str, Any] = {**event.details, "host_tool": True, "server": hosted.server}
    return replace(event, name=own, details=details)
