"""The MCP ``tools/list`` entries of a tool set."""

from __future__ import annotations

from collections.abc import Iterable

import mcp.types as mt

from ._define import Tool


def mcp_tools(tools: Iterable[Tool]) -> list[mt.Tool]:
    return [
        mt.Tool(name=t.name, description=t.description, input_schema=t.input_schema, output_schema=_object(t))
        for t in tools
    ]


def _object(t: Tool) -> dict[str, object] | None:
    # MCP output schemas describe structuredContent, which must be an object; other results travel as text.
    schema = t.output_schema
    return schema if schema is not None and schema.get("type") == "object" else None
