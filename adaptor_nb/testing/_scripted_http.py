"""What the fake model servers share: a threaded HTTP server on 127.0.0.1, scripted replies, recorded requests."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Generic, Self, TypeVar

ReplyT = TypeVar("ReplyT")
RequestT = TypeVar("RequestT")


class OwnedServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, owner: Any, handler: type[BaseHTTPRequestHandler]) -> None:  # owner: the fake server
        self.owner = owner
        super().__init__(("127.0.0.1", 0), handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (a killed CLI, a stopped server) is normal here, not an error to print."""


class ScriptedHTTPServer(Generic[ReplyT, RequestT]):
    """A local server answering model requests from a queue of replies, then ``responder``, then a fallback.

    Subclasses set ``handler`` (the request handler class, which calls ``_record`` and ``_next_reply`` through
    ``self.server.owner``) and implement ``_fallback_reply`` and ``_is_model_request``.
    """

    handler: ClassVar[type[BaseHTTPRequestHandler]]

    def __init__(self) -> None:
        self.responder: Callable[[RequestT], ReplyT | None] | None = None
        self._script: deque[ReplyT] = deque()
        self._requests: list[RequestT] = []
        self._holds: dict[str, threading.Event] = {}
        self._cond = threading.Condition()
        self._stopping = threading.Event()
        self._server: OwnedServer | None = None
        self._thread: threading.Thread | None = None
        self._conns: set[socket.socket] = set()

    # -- lifecycle -----------------------------------------------------------------------------------------

    def start(self) -> Self:
        """Listen on a free port of 127.0.0.1."""
        if self._server is None:
            self._stopping.clear()
            self._server = OwnedServer(self, self.handler)
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=type(self).__name__,
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and end every open (or held) stream."""
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()
        with self._cond:
            conns = list(self._conns)
        for conn in conns:  # idle keep-alive connections and streams that are still open
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not running; call start() or use it as a context manager")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The server root, ``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def __repr__(self) -> str:
        where = self.url if self._server is not None else "stopped"
        return f"<{type(self).__name__} {where} requests={len(self._requests)} queued={len(self._script)}>"

    # -- scripting -----------------------------------------------------------------------------------------

    def enqueue(self, *replies: ReplyT) -> None:
        """Answer the next model requests with ``replies``, in order."""
        with self._cond:
            self._script.extend(replies)

    def clear(self) -> None:
        """Forget queued replies and recorded requests."""
        with self._cond:
            self._script.clear()
            self._requests.clear()

    def hold(self, name: str = "") -> threading.Event:
        """The named event (created on first use) that ``[[hold NAME]]`` replies wait for."""
        with self._cond:
            event = self._holds.get(name)
            if event is None:
                event = self._holds[name] = threading.Event()
            return event

    def _next_reply(self, request: RequestT) -> ReplyT:
        with self._cond:
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            reply = self.responder(request)
            if reply is not None:
                return reply
        return self._fallback_reply(request)

    def _fallback_reply(self, request: RequestT) -> ReplyT:
        raise NotImplementedError

    def _is_model_request(self, request: RequestT) -> bool:
        raise NotImplementedError

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._cond:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)

    # -- recording -----------------------------------------------------------------------------------------

    def _record(self, request: RequestT) -> None:
        with self._cond:
            self._requests.append(request)
            self._cond.notify_all()

    @property
    def requests(self) -> list[RequestT]:
        """Every request received so far (a copy)."""
        with self._cond:
            return list(self._requests)

    @property
    def model_requests(self) -> list[RequestT]:
        """The model requests received so far."""
        return [r for r in self.requests if self._is_model_request(r)]

    def wait_for_requests(self, count: int, timeout: float = 30.0) -> list[RequestT]:
        """Block until ``count`` model requests arrived; raises TimeoutError otherwise."""
        with self._cond:
            ok = self._cond.wait_for(lambda: sum(map(self._is_model_request, self._requests)) >= count, timeout)
            models = [r for r in self._requests if self._is_model_request(r)]
        if not ok:
            raise TimeoutError(f"expected {count} model requests, got {len(models)}")
        return models
