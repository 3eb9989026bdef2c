"""Host tools served in-process: one MCP JSON-RPC message in, its reply out, no transport of its own.

A driver whose CLI carries MCP messages over its own control channel (Claude Code's ``{"type": "sdk"}`` servers,
relayed as ``mcp_message`` control requests) hands each message to the function :meth:`InProcessTools.serve_for`
returns and writes the reply back. Calls go through the same handler as the HTTP server, so they report Notices to
the run that caused them and are cancelled with it. Replies are built with ``mcp.types``; this module imports
``mcp`` and is itself imported only when an Agent declares tools.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import mcp.types as mt
from pydantic import BaseModel, ValidationError

from ._invoke import CallOutcome

__all__ = ["InProcessTools", "Serve"]

Serve = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""``(JSON-RPC message) -> JSON-RPC reply``, or None for a notification."""

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

CallHandler = Callable[[str, str, Any], Awaitable[CallOutcome]]
"""``(route, tool name, arguments) -> outcome``."""


class InProcessTools:
    """The ``initialize`` / ``ping`` / ``tools/list`` / ``tools/call`` side of an MCP server for one tool set."""

    def __init__(self, name: str, tools: list[mt.Tool], on_call: CallHandler) -> None:
        self._name = name
        self._tools = tools
        self._on_call = on_call

    def serve_for(self, route: str) -> Serve:
        """The entry point for the CLI of the run (or Thread) whose route is ``route``."""

        async def serve(message: dict[str, Any]) -> dict[str, Any] | None:
            return await self._handle(route, message)

        return serve

    async def _handle(self, route: str, message: dict[str, Any]) -> dict[str, Any] | None:
        if message.get("id") is None:
            return None  # a notification (initialized, cancelled, ...): nothing to answer
        mid = message["id"]
        method = message.get("method")
        raw = message.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if method == "tools/call" and _plain_call(params):
            return {"jsonrpc": "2.0", "id": mid, "result": await self._call(route, params)}
        result: BaseModel
        try:
            if method == "initialize":
                result = mt.InitializeResult(
                    protocol_version=_version(params.get("protocolVersion")),
                    capabilities=mt.ServerCapabilities(tools=mt.ToolsCapability()),
                    server_info=mt.Implementation(name=self._name, version="1"),
                )
            elif method == "ping":
                result = mt.EmptyResult()
            elif method == "tools/list":
                result = mt.ListToolsResult(tools=self._tools)
            elif method == "tools/call":
                call = mt.CallToolRequestParams.model_validate(params)
                outcome = await self._on_call(route, call.name, call.arguments or {})
                result = mt.CallToolResult(
                    content=[mt.TextContent(type="text", text=outcome.text)],
                    structured_content=outcome.structured if not outcome.is_error else None,
                    is_error=outcome.is_error,
                )
            else:
                return _error(mid, mt.METHOD_NOT_FOUND, f"method {str(method)[:80]!r} is not served")
        except ValidationError as exc:
            return _error(mid, mt.INVALID_PARAMS, f"invalid params ({exc.error_count()} error(s))")
        return {"jsonrpc": "2.0", "id": mid, "result": result.model_dump(by_alias=True, mode="json", exclude_none=True)}

    async def _call(self, route: str, params: dict[str, Any]) -> dict[str, Any]:
        """A well-formed ``tools/call``: the reply is built as a plain dict (the message sits on every round trip)."""
        outcome = await self._on_call(route, params["name"], params.get("arguments") or {})
        reply: dict[str, Any] = {"content": [{"type": "text", "text": outcome.text}], "isError": outcome.is_error}
        if outcome.structured is not None and not outcome.is_error:
            reply["structuredContent"] = outcome.structured
        return reply


def _plain_call(params: dict[str, Any]) -> bool:
    """Whether ``tools/call`` params need no model to read: a string name and an object (or no) arguments.

    Anything else goes through ``mcp.types`` validation, which answers INVALID_PARAMS as before."""
    arguments = params.get("arguments")
    return isinstance(params.get("name"), str) and (arguments is None or isinstance(arguments, dict))


def _version(asked: object) -> str:
    """The client's protocol version when it is no newer than mcp's (dates compare as strings), else mcp's."""
    if isinstance(asked, str) and _DATE.fullmatch(asked) and asked <= mt.LATEST_PROTOCOL_VERSION:
        return asked
    return mt.LATEST_PROTOCOL_VERSION


def _error(mid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": message}}
