"""A plain httpx client for the endpoint: post an input, read the AG-UI events of the response."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx


def body(thread_id: str, *messages: tuple[str, str], run_id: str = "r1", **extra: Any) -> dict[str, Any]:
    return {
        "threadId": thread_id,
        "runId": run_id,
        "messages": [{"id": mid, "role": "user", "content": text} for mid, text in messages],
        **extra,
    }


async def sse_events(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The events of an SSE response, one JSON object per ``data:`` line."""
    async for line in response.aiter_lines():
        if line.startswith("data: "):
            yield json.loads(line[6:])


async def run(client: httpx.AsyncClient, url: str, payload: dict[str, Any], token: str | None) -> list[dict[str, Any]]:
    """Post ``payload`` and return every event of the AG-UI run."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with client.stream("POST", url, json=payload, headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        return [ev async for ev in sse_events(response)]


def history(previous: list[dict[str, Any]], *messages: tuple[str, str]) -> list[dict[str, Any]]:
    """The conversation a client holds after ``previous`` (its tool calls and text), then user ``messages``: what an
    AG-UI client sends back on its next input."""
    out: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    for ev in previous:
        t = ev["type"]
        if t == "MESSAGES_SNAPSHOT":
            out = list(ev["messages"])
        elif t == "TOOL_CALL_START":
            call = {
                "id": ev["toolCallId"],
                "type": "function",
                "function": {"name": ev["toolCallName"], "arguments": ""},
            }
            calls[ev["toolCallId"]] = call
            out.append({"id": f"a-{ev['toolCallId']}", "role": "assistant", "toolCalls": [call]})
        elif t == "TOOL_CALL_ARGS":
            calls[ev["toolCallId"]]["function"]["arguments"] += ev["delta"]
        elif t == "TEXT_MESSAGE_START":
            out.append({"id": ev["messageId"], "role": ev.get("role", "assistant"), "content": ""})
        elif t == "TEXT_MESSAGE_CONTENT":
            next(m for m in out if m["id"] == ev["messageId"])["content"] += ev["delta"]
        elif t == "TOOL_CALL_RESULT":
            out.append(
                {"id": ev["messageId"], "role": "tool", "toolCallId": ev["toolCallId"], "content": ev["content"]}
            )
    return out + [{"id": mid, "role": "user", "content": text} for mid, text in messages]
