"""The loopback MCP server that hosts an Agent's tools: streamable HTTP on 127.0.0.1, a free port, a bearer token.

The official ``mcp`` package speaks the protocol; uvicorn serves it on the Agent's own event loop (so async tools
run on that loop). Every request must carry ``Authorization: Bearer <token>`` (401 otherwise) and a loopback Host
header. Paths are ``/mcp/<route>``: the route names the Thread whose CLI is calling, so a call can reach that run.
Requests are answered with plain JSON, except a ``tools/call`` that carries a progress token: that one is served on
an SSE stream, so keep-alive progress notifications (``_keepalive``) can precede the result, and is still answered
as plain JSON when its result comes before the first keep-alive (``_deferred``).
This module imports ``mcp`` and is itself imported only when an Agent declares tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hmac
import json
import socket
from collections.abc import Awaitable, Callable, Iterator, Mapping, MutableMapping
from typing import Any

import mcp.types as mt
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from ._deferred import JsonUnlessStreamed
from ._invoke import CallOutcome
from ._keepalive import INTERVAL, progress_token, wants_progress, while_running

__all__ = ["CallHandler", "ToolServer"]

CallHandler = Callable[[str, str, Any], Awaitable[CallOutcome]]
"""``(route, tool name, arguments) -> outcome``."""

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_ROUTE: contextvars.ContextVar[str] = contextvars.ContextVar("adaptor_nb_tool_route", default="")


class _Quiet(uvicorn.Server):
    """uvicorn without signal handlers: it runs inside someone else's process (a kernel, a script)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class ToolServer:
    """One running server; ``start()`` binds and serves, ``close()`` stops it."""

    def __init__(self, name: str, tools: list[mt.Tool], on_call: CallHandler, token: str) -> None:
        self._tools = tools
        self._on_call = on_call
        self._token = token.encode()
        self._lowlevel: Server[Any] = Server(name, on_list_tools=self._list, on_call_tool=self._call)
        self.port = 0
        self._task: asyncio.Task[None] | None = None
        self._server: _Quiet | None = None
        self._manager: StreamableHTTPSessionManager | None = None
        self._streaming: StreamableHTTPSessionManager | None = None
        self.keepalive = INTERVAL
        """Seconds between progress notifications during a call (0 sends none)."""
        self.keepalives = 0
        """Progress notifications sent so far (for tests and diagnostics)."""

    # -- MCP handlers ------------------------------------------------------------------------------------

    async def _list(self, ctx: Any, params: Any) -> mt.ListToolsResult:
        return mt.ListToolsResult(tools=self._tools)

    async def _call(self, ctx: Any, params: mt.CallToolRequestParams) -> mt.CallToolResult:
        work = self._on_call(_ROUTE.get(), params.name, params.arguments or {})
        token = progress_token(ctx.meta)
        if token is None or self.keepalive <= 0:
            outcome = await work
        else:
            related = str(ctx.request_id)

            async def beat(n: int) -> None:
                await ctx.session.send_progress_notification(token, float(n), related_request_id=related)
                self.keepalives += 1

            outcome = await while_running(work, beat, self.keepalive)
        return mt.CallToolResult(
            content=[mt.TextContent(type="text", text=outcome.text)],
            structured_content=outcome.structured if not outcome.is_error else None,
            is_error=outcome.is_error,
        )

    # -- HTTP --------------------------------------------------------------------------------------------

    async def _asgi(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers: Mapping[bytes, bytes] = dict(scope.get("headers") or ())
        auth = headers.get(b"authorization", b"")
        if not (auth.startswith(b"Bearer ") and hmac.compare_digest(auth[7:].strip(), self._token)):
            await _plain(send, 401, {"error": "unauthorized"}, (b"www-authenticate", b"Bearer"))
            return
        parts = str(scope.get("path", "")).strip("/").split("/")
        if len(parts) != 2 or parts[0] != "mcp" or not parts[1]:
            await _plain(send, 404, {"error": "not found"})
            return
        assert self._manager is not None and self._streaming is not None
        manager = self._manager
        if scope.get("method") == "POST":
            body = await _body(receive)
            if wants_progress(body):
                manager, send = self._streaming, JsonUnlessStreamed(send)
            receive = _replay(body, receive)
        reset = _ROUTE.set(parts[1])
        try:
            await manager.handle_request(scope, receive, send)
        finally:
            _ROUTE.reset(reset)

    def url(self, route: str) -> str:
        return f"http://127.0.0.1:{self.port}/mcp/{route}"

    async def start(self) -> None:
        # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and without it a
        # response written as headers then body waits ~40 ms for the client's delayed ACK.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        hosts = [f"127.0.0.1:{self.port}", f"localhost:{self.port}"]
        self._manager = StreamableHTTPSessionManager(
            self._lowlevel,
            stateless=True,
            json_response=True,
            security_settings=TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=[]),
        )
        self._streaming = StreamableHTTPSessionManager(
            self._lowlevel,
            stateless=True,
            json_response=False,
            security_settings=TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=[]),
        )
        config = uvicorn.Config(
            self._asgi, log_level="error", lifespan="off", access_log=False, ws="none", interface="asgi3", http="h11"
        )
        self._server = _Quiet(config)
        started = asyncio.Event()
        manager, streaming = self._manager, self._streaming
        server = self._server

        async def serve() -> None:
            try:
                async with manager.run(), streaming.run():
                    config.load()
                    server.lifespan = config.lifespan_class(config)
                    await server.startup(sockets=[sock])
                    started.set()
                    if not server.should_exit:
                        await server.main_loop()
                        await server.shutdown(sockets=[sock])
            finally:
                started.set()
                sock.close()

        self._task = asyncio.ensure_future(serve())
        await started.wait()
        if self._task.done():
            self._task.result()
            raise RuntimeError("the tool server stopped while starting")

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        if self._server is not None:
            self._server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), 5.0)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def _plain(send: Send, status: int, body: dict[str, Any], *extra: tuple[bytes, bytes]) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


async def _body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message.get("type") != "http.request":
            break
        chunks.append(bytes(message.get("body", b"")))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that yields the body read already, then whatever the connection sends next."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def again() -> MutableMapping[str, Any]:
        return pending.pop() if pending else await receive()

    return again
