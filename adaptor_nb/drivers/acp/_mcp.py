"""The Agent's MCP servers and host tools as ACP ``session/new`` declarations.

Stdio servers go to every agent (ACP requires them); HTTP and SSE servers only to an agent whose ``initialize``
advertises that transport in ``mcpCapabilities``, else the run fails naming the server and what the agent takes.
The host tools are the Agent's loopback HTTP server, its bearer token sent as a header over the agent's stdin
(never on a command line). A ``bearer_token_env`` is read from the environment the agent is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...driver import HTTP, SSE, DriverFailure, Invocation, Server, Stdio
from ._sdk import sdk

TRANSPORTS = frozenset({"stdio", "http", "sse"})


def remote_transports(init: Mapping[str, Any]) -> frozenset[str]:
    """The remote MCP transports an agent's ``initialize`` answer advertises."""
    caps = init.get("agentCapabilities")
    mcp = caps.get("mcpCapabilities") if isinstance(caps, dict) else None
    if not isinstance(mcp, dict):
        return frozenset()
    return frozenset(t for t in ("http", "sse") if mcp.get(t))


def declarations(inv: Invocation, init: Mapping[str, Any], env: Mapping[str, str], agent: str) -> list[Any]:
    """``inv.mcp`` and ``inv.tools`` as the SDK's MCP server models, checked against what the agent takes."""
    servers: list[Server] = list(inv.mcp or ())
    hosted = inv.tools
    if hosted is not None:
        servers.append(HTTP(hosted.server, hosted.url, headers={"Authorization": f"Bearer {hosted.token}"}))
    offered = remote_transports(init)
    return [_declare(s, offered, env, agent) for s in servers]


def servers_key(inv: Invocation) -> int:
    """What the session's MCP servers depend on: a parked agent whose session has other servers is not reused."""
    hosted = inv.tools
    tools = (hosted.url, hosted.token, hosted.names) if hosted is not None else None
    return hash((tuple(inv.mcp) if inv.mcp is not None else None, tools))


def _declare(server: Server, offered: frozenset[str], env: Mapping[str, str], agent: str) -> Any:
    schema = sdk().schema
    if isinstance(server, Stdio):
        variables = [schema.EnvVariable(name=k, value=v) for k, v in server.env.items()]
        return schema.McpServerStdio(name=server.name, command=server.command, args=list(server.args), env=variables)
    if server.transport not in offered:
        takes = ", ".join(["stdio", *sorted(offered)])
        raise DriverFailure(
            f"the ACP agent {agent!r} does not take MCP servers over {server.transport} (its mcpCapabilities "
            f"offer {takes}), so server {server.name!r} cannot be attached",
            details={"server": server.name, "transport": server.transport, "offered": sorted(offered)},
        )
    headers = dict(server.headers)
    if server.bearer_token_env:
        token = env.get(server.bearer_token_env, "")
        if not token:
            raise DriverFailure(
                f"MCP server {server.name!r}: bearer_token_env {server.bearer_token_env!r} is not set",
                details={"server": server.name, "field": "bearer_token_env"},
            )
        headers["Authorization"] = f"Bearer {token}"
    values = [schema.HttpHeader(name=k, value=v) for k, v in headers.items()]
    model = schema.HttpMcpServer if isinstance(server, HTTP) else schema.SseMcpServer
    assert isinstance(server, HTTP | SSE)
    return model(type=server.transport, name=server.name, url=server.url, headers=values)


__all__ = ["TRANSPORTS", "declarations", "remote_transports", "servers_key"]
