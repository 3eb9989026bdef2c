"""Host-tool error results as errors: CLI 2.163.0 drops the MCP result's ``isError`` flag (a rejection or an
exception of a host tool arrives as ``is_error: false``), so the host's own record of its error answers decides."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeVar

from ...driver import Event, HostedTools, ToolResult

E = TypeVar("E", bound=Event)


def _text(result: Any) -> str:
    if isinstance(result, str):
        return result
    content = result.get("content") if isinstance(result, dict) else result
    if isinstance(content, str):
        return content
    parts = [b.get("text") for b in content or () if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return "".join(str(p) for p in parts)


def host_error(event: E, hosted: HostedTools | None) -> E:
    """``event`` marked as an error when it is a host tool's result the host answered with an error."""
    if hosted is None or hosted.failed is None or not isinstance(event, ToolResult):
        return event
    if event.is_error or event.details.get("host_tool") is not True:
        return event
    if not hosted.failed(event.name, _text(event.result)):
        return event
    return replace(event, is_error=True)
