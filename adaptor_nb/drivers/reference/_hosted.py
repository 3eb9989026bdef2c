"""The reference driver's host-tool calls: it calls the Agent's tool server the way a CLI would (an MCP
``tools/call`` over streamable HTTP with the bearer token), so scripted runs exercise the real host."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.error
import urllib.request
from typing import Any

from ...driver import HostedTools
from ._scenario import HostCall

_PROTOCOL = "2025-06-18"
_DIRECTIVE = re.compile(r"\[\[call ([A-Za-z][A-Za-z0-9_-]*)\s*")


def host_directives(prompt: str) -> tuple[HostCall, ...]:
    """``[[call NAME {json args}]]`` directives in a prompt: without a scenario, the reference driver makes
    these host-tool calls one after the other (how notebooks and demos script tool use offline)."""
    out: list[HostCall] = []
    decoder = json.JSONDecoder()
    for m in _DIRECTIVE.finditer(prompt):
        args: Any = {}
        rest = prompt[m.end() :]
        if rest.startswith("{"):
            try:
                args, _ = decoder.raw_decode(rest)
            except ValueError:
                args = {}
        out.append(HostCall(m.group(1), args if isinstance(args, dict) else {}))
    return tuple(out)


def _post(url: str, token: str, body: dict[str, Any], timeout: float) -> dict[str, Any]:
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": _PROTOCOL,
        },
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        data: dict[str, Any] = json.loads(resp.read().decode())
    return data


async def call_host_tool(hosted: HostedTools, name: str, args: dict[str, Any]) -> tuple[str, bool]:
    """The call's text result and whether it is an error."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": args}}
    try:
        reply = await asyncio.to_thread(_post, hosted.url, hosted.token, body, hosted.call_timeout)
    except (OSError, urllib.error.URLError, ValueError) as exc:
        return f"the tool server could not be reached: {type(exc).__name__}", True
    if "error" in reply:
        return str((reply.get("error") or {}).get("message") or "MCP error"), True
    result = reply.get("result") or {}
    text = "".join(str(c.get("text", "")) for c in result.get("content") or () if isinstance(c, dict))
    return text, bool(result.get("isError"))
