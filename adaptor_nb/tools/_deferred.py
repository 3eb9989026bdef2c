"""Answer a streamed (SSE) MCP response as plain JSON when the result is the first thing it carries.

A ``tools/call`` with a progress token is served on an SSE stream so keep-alive progress notifications can precede
its result (``_keepalive``). Most calls end long before their first keep-alive is due, and for those the stream is
pure overhead on both ends (the server's SSE writer, the client's event-stream parser). :class:`JsonUnlessStreamed`
wraps the ASGI ``send`` of such a request: it holds the SSE response's headers back until the first event; if that
event is the JSON-RPC response, the client gets it as an ``application/json`` answer instead (a server may answer a
POST either way); if it is a notification, the headers and everything after go out as the stream they are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["JsonUnlessStreamed"]

Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]

_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


class JsonUnlessStreamed:
    """An ASGI ``send`` that turns an SSE response whose first event is the JSON-RPC response into a JSON one."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._start: Message | None = None
        self._held = b""
        self._mode = "hold"  # hold -> stream (pass everything on) or json (answered; drop the rest)
        self.answered_as_json = False

    async def __call__(self, message: Message) -> None:
        if self._mode == "stream":
            await self._send(message)
            return
        if self._mode == "json":
            return
        kind = message.get("type")
        if kind == "http.response.start":
            if _is_event_stream(message):
                self._start = message
            else:
                await self._stream(message)
            return
        if kind != "http.response.body" or self._start is None:
            await self._stream(message)
            return
        self._held += bytes(message.get("body", b""))
        more = bool(message.get("more_body"))
        end = _EVENT_END.search(self._held)
        if end is None:
            if not more:
                await self._flush(more)
            return
        data = _data_of(self._held[: end.start()])
        if data is not None and _is_response(data):
            self._mode = "json"
            self.answered_as_json = True
            await self._send({"type": "http.response.start", "status": 200, "headers": _json_headers(len(data))})
            await self._send({"type": "http.response.body", "body": data, "more_body": False})
            return
        await self._flush(more)

    async def _stream(self, message: Message) -> None:
        self._mode = "stream"
        await self._send(message)

    async def _flush(self, more: bool) -> None:
        start, self._start = self._start, None
        body, self._held = self._held, b""
        self._mode = "stream"
        if start is not None:
            await self._send(start)
        await self._send({"type": "http.response.body", "body": body, "more_body": more})


def _is_event_stream(start: Message) -> bool:
    for name, value in start.get("headers") or ():
        if bytes(name).lower() == b"content-type":
            return bytes(value).split(b";")[0].strip().lower() == b"text/event-stream"
    return False


def _data_of(event: bytes) -> bytes | None:
    lines = [line for line in re.split(rb"\r\n|\n|\r", event) if line.startswith(b"data:")]
    if not lines:
        return None
    return b"\n".join(line[5:].removeprefix(b" ") for line in lines)


def _is_response(data: bytes) -> bool:
    try:
        message = json.loads(data)
    except ValueError:
        return False
    return isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message)


def _json_headers(length: int) -> list[tuple[bytes, bytes]]:
    return [(b"content-type", b"application/json"), (b"content-length", str(length).encode())]
