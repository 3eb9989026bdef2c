"""The MCP ``tools/list`` entries of a tool set."""

from __future__ import annotations

from collections.abc import Iterable

import mcp.types as mt

from ._define import Tool

# Claude Code runs several calls of one model step at the same time only for tools that declare readOnlyHint, and
# one after another otherwise. Host tools that need no approval are pre-allowed anyway, so they carry the hint;
# tools declared with requires_approval=True do not, and keep going one at a time through the permission flow.
_CONCURRENT = mt.ToolAnnotations(read_only_hint=True)


def mcp_tools(tools: Iterable[Tool]) -> list[mt.Tool]:
    return [
        mt.Tool(
            name=t.name,
            description=t.description,
            input_schema=t.input_schema,
            output_schema=_object(t),
            annotations=None if t.requires_approval else _CONCURRENT,
        )
        for t in tools
    ]


def _object(t: Tool) -> dict[str, object] | None:
    # MCP output schemas describe structuredContent, which must be an object; other results travel as text.
    schema = t.output_schema
    return schema if schema is not None and schema.get("type") == "object" else None
