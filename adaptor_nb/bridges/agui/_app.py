"""The HTTP endpoint: ``POST /agui`` takes a RunAgentInput and streams the AG-UI run as Server-Sent Events."""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import anyio
from ag_ui.core import RunAgentInput
from ag_ui.encoder import EventEncoder
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ..._events import Event
from ._bridge import Bridge
from ._keys import thread_key

MAX_BODY = 4 * 1024 * 1024
"""The largest request body accepted (bytes); larger ones get 413."""
NDJSON = "application/x-ndjson"


class AguiApp:
    """An ASGI app serving ``POST /agui`` for an Agent's Threads. ``token`` is the bearer token clients send."""

    def __init__(self, bridge: Bridge, token: str | None, cors_origins: Sequence[str], max_body: int) -> None:
        self.bridge = bridge
        self.token = token
        self._expected = f"Bearer {token}".encode() if token else None
        self._max_body = max_body
        self._encoder = EventEncoder()
        middleware = []
        if cors_origins:
            middleware.append(
                Middleware(
                    CORSMiddleware,
                    allow_origins=list(cors_origins),
                    allow_methods=["POST"],
                    allow_headers=["authorization", "content-type", "accept"],
                )
            )
        self._app = Starlette(
            routes=[Route("/agui", self._post, methods=["POST"])],
            middleware=middleware,
            lifespan=self._lifespan,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await self.bridge.close()

    async def aclose(self) -> None:
        """End every run the endpoint started (a server's shutdown does this too)."""
        await self.bridge.close()

    def _authorized(self, request: Request) -> bool:
        if self._expected is None:
            return True
        got = request.headers.get("authorization", "").encode()
        return secrets.compare_digest(got, self._expected)

    async def _read(self, request: Request) -> bytes | None:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self._max_body:
            return None
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > self._max_body:
                return None
        return bytes(body)

    async def _post(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse(
                {"error": "unauthorized", "detail": "send the endpoint's token as 'Authorization: Bearer <token>'"},
                status_code=401,
                headers={"www-authenticate": "Bearer"},
            )
        try:
            body = await self._read(request)
        except ClientDisconnect:
            return Response(status_code=400)
        if body is None:
            return JSONResponse(
                {"error": "body_too_large", "detail": f"the request body exceeds {self._max_body} bytes"},
                status_code=413,
            )
        try:
            data = json.loads(body)
        except ValueError as exc:
            return _unprocessable("body", f"the body is not JSON: {exc}")
        try:
            input = RunAgentInput.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            return _unprocessable(where, first["msg"], [_error(e) for e in exc.errors()])
        ndjson = _prefers_ndjson(request.headers.get("accept", ""))
        return _EventStream(
            _framed(self.bridge.run(input), ndjson),
            media_type=NDJSON if ndjson else self._encoder.get_content_type(),
            headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        )


class _EventStream(StreamingResponse):
    """A streaming response that notices a client going away at once (not at the next write), so the AG-UI run it
    shows stops following the Stream; the Stream itself goes on."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with anyio.create_task_group() as group:

            async def stream() -> None:
                with contextlib.suppress(OSError):
                    await self.stream_response(send)
                group.cancel_scope.cancel()

            group.start_soon(stream)
            await self.listen_for_disconnect(receive)
            group.cancel_scope.cancel()


def _prefers_ndjson(accept: str) -> bool:
    """NDJSON when the client names it before (or without) ``text/event-stream``; SSE otherwise."""
    nd, sse = accept.find(NDJSON), accept.find("text/event-stream")
    return nd >= 0 and (sse < 0 or nd < sse)


async def _framed(batches: AsyncIterator[list[str]], ndjson: bool) -> AsyncIterator[str]:
    """Each batch of JSON texts as one body chunk: Server-Sent Events ``data:`` frames (what ag-ui-protocol's
    ``EventEncoder`` writes for one event), or NDJSON lines."""
    try:
        async for batch in batches:
            if ndjson:
                yield "".join(f"{text}\n" for text in batch)
            else:
                yield "".join(f"data: {text}\n\n" for text in batch)
    finally:
        # A disconnected client: end this AG-UI run's subscription; the run itself goes on.
        closer = getattr(batches, "aclose", None)
        if closer is not None:
            await closer()


def _error(e: Any) -> dict[str, Any]:
    return {"field": ".".join(str(p) for p in e["loc"]), "message": e["msg"], "type": e["type"]}


def _unprocessable(field: str, message: str, errors: list[dict[str, Any]] | None = None) -> JSONResponse:
    body = {"error": "invalid_input", "field": field, "detail": f"{field}: {message}"}
    if errors:
        body["errors"] = errors  # type: ignore[assignment]
    return JSONResponse(body, status_code=422)


def app(
    agent_or_factory: Any,
    *,
    token: str | bool | None = None,
    cors_origins: Sequence[str] = (),
    thread: str | None = None,
    key: Callable[[str], str] = thread_key,
    resume_only: bool = False,
    max_body: int = MAX_BODY,
    on_event: Callable[[str, Event], None] | None = None,
    **call_options: Any,
) -> AguiApp:
    """An ASGI app with ``POST /agui`` driving ``agent_or_factory``'s Threads for AG-UI 1.0 clients.

    ``agent_or_factory`` is an Agent, or a callable returning one (or an awaitable of one) called at the first
    request; an Agent the app made is closed at shutdown. The input's ``threadId`` selects the Thread
    ``key(threadId)`` (``thread_key`` by default; ``key=str`` uses the id itself as the Thread name), or every
    input goes to the one Thread named ``thread``. ``token`` is the bearer token clients must send: None makes a
    random one (read it from ``.token``), ``False`` turns authentication off. ``call_options`` (model, policy, ...)
    apply to the runs the endpoint starts. ``on_event(thread_key, event)`` sees every event of those runs, on the
    event loop (a notebook view follows web runs this way). Serve it with ``agui.serve(...)`` or any ASGI server.
    """
    if token is True:
        raise ValueError("token=True is not a token: pass a string, None (a random token) or False (no token)")
    chosen = secrets.token_urlsafe(24) if token is None else (token or None)
    bridge = Bridge(
        agent_or_factory,
        thread=thread,
        key=key,
        resume_only=resume_only,
        call_options=call_options,
        on_event=on_event,
    )
    return AguiApp(bridge, chosen, cors_origins, max_body)
