"""How the Cursor replay stand-in calls a tool of an MCP server from ``.cursor/mcp.json``: streamable HTTP with urllib.

One call is three POSTs of JSON-RPC: ``initialize``, the ``notifications/initialized`` notification and
``tools/call``, with ``Accept: application/json, text/event-stream`` and the ``Mcp-Session-Id`` the server gave. A
reply may be plain JSON or a server-sent event stream. ``${env:VAR}`` in the server's url and headers is expanded from
the given environment, as Cursor does. Standard library only.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

__all__ = ["CallFailed", "call_tool"]

_ENV_REF = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
PROTOCOL = "2025-03-26"


class CallFailed(Exception):
    """The server could not be reached, refused the request (its HTTP status in the text) or answered an error."""


def _expand(value: str, env: Mapping[str, str]) -> str:
    return _ENV_REF.sub(lambda m: env.get(m.group(1), ""), value)


class _Client:
    def __init__(self, url: str, headers: dict[str, str], timeout: float) -> None:
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.session = ""

    def post(self, message: dict[str, Any]) -> Any:
        headers = {
            **self.headers,
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL,
        }
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        req = urllib.request.Request(self.url, data=json.dumps(message).encode(), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                self.session = resp.headers.get("Mcp-Session-Id") or self.session
                kind = resp.headers.get("Content-Type") or ""
                body = resp.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as exc:
            raise CallFailed(f"HTTP {exc.code} {exc.reason} from the MCP server") from None
        except (OSError, urllib.error.URLError) as exc:
            raise CallFailed(f"could not reach the MCP server: {exc}") from None
        if "id" not in message:
            return None  # a notification: 202 Accepted, no body
        reply = _reply(body, kind, message["id"])
        if "error" in reply:
            err = reply["error"]
            raise CallFailed(str(err.get("message") if isinstance(err, dict) else err))
        return reply.get("result")


def _reply(body: str, kind: str, ident: Any) -> dict[str, Any]:
    """The JSON-RPC response with id ``ident`` in a JSON body or an event stream."""
    if "text/event-stream" in kind:
        candidates: list[str] = []
        for block in body.replace("\r\n", "\n").split("\n\n"):
            data = "\n".join(line[5:].lstrip() for line in block.split("\n") if line.startswith("data:"))
            if data:
                candidates.append(data)
    else:
        candidates = [body]
    for text in candidates:
        try:
            obj = json.loads(text)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("id") == ident:
            return obj
    raise CallFailed(f"the MCP server sent no response to request {ident}")


def call_tool(
    server: Mapping[str, Any], tool: str, arguments: dict[str, Any], env: Mapping[str, str], timeout: float = 60.0
) -> dict[str, Any]:
    """``tools/call`` of ``tool`` on the HTTP ``server`` entry of an ``mcp.json``; its ``result`` object."""
    url = server.get("url")
    if not isinstance(url, str) or not url:
        raise CallFailed("the MCP server entry has no url")
    raw = server.get("headers")
    headers = {str(k): _expand(str(v), env) for k, v in (raw.items() if isinstance(raw, dict) else ())}
    client = _Client(_expand(url, env), headers, timeout)
    client.post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "cursor-replay", "version": "1"},
            },
        }
    )
    client.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    result = client.post(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    )
    if not isinstance(result, dict):
        raise CallFailed("the MCP server's tools/call result is not an object")
    return result
