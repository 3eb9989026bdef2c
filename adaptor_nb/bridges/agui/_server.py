"""Serve the endpoint on the running event loop (a kernel's, a script's): loopback by default, no extra process."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from typing import Protocol

import uvicorn
from starlette.types import Receive, Scope, Send


class Served(Protocol):
    """What ``serve`` needs of an app: ASGI, its token, and ``aclose()`` to end its runs (an AguiApp, or a wrapper)."""

    @property
    def token(self) -> str | None: ...

    async def aclose(self) -> None: ...

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None: ...


class _Quiet(uvicorn.Server):
    """uvicorn without signal handlers: it runs inside someone else's process."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class Server:
    """A running endpoint: ``url`` to post to, ``token`` to send, ``stop()`` to end it and every run it started."""

    def __init__(self, app: Served, host: str, port: int) -> None:
        self.app = app
        self.host = host
        self.port = port
        self._server: _Quiet | None = None
        self._task: asyncio.Task[None] | None = None
        self._sock: socket.socket | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/agui"

    @property
    def token(self) -> str | None:
        return self.app.token

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def bind(self) -> None:
        """Take the port now (synchronously), so ``url`` is final before serving starts."""
        if self._sock is not None:
            return
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.port))
        except OSError:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        self._sock = sock

    async def start(self) -> None:
        """Bind (if not yet bound) and serve on the running loop until ``stop()``."""
        self.bind()
        sock = self._sock
        assert sock is not None
        config = uvicorn.Config(
            self.app,
            log_level="error",
            lifespan="on",
            access_log=False,
            ws="none",
            http="h11",
            timeout_graceful_shutdown=5,
        )
        server = self._server = _Quiet(config)
        started = asyncio.Event()

        async def serve() -> None:
            try:
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
                self._sock = None

        self._task = asyncio.get_running_loop().create_task(serve(), name="agui-server")
        await started.wait()
        if self._task.done():
            self._task.result()
            raise RuntimeError("the AG-UI endpoint stopped while starting")

    def close_listener(self) -> None:
        """Stop accepting connections now (synchronously); ``stop()`` does the rest."""
        if self._server is not None:
            for listener in self._server.servers:
                listener.close()
        if self._sock is not None and self._task is None:
            self._sock.close()
            self._sock = None

    async def stop(self) -> None:
        """Cancel the runs the endpoint started, close the open responses and stop listening."""
        task, self._task = self._task, None
        if task is None:
            if self._sock is not None:  # bound, never served
                self._sock.close()
                self._sock = None
            await self.app.aclose()
            return
        await self.app.aclose()  # the runs end, so their responses end and the server can drain
        if self._server is not None:
            self._server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), 10.0)
        except TimeoutError:
            if self._server is not None:
                self._server.force_exit = True
            await task


async def serve(app: Served, *, host: str = "127.0.0.1", port: int = 0) -> Server:
    """Start serving ``app`` on this event loop at ``host:port`` (port 0: any free port); returns the Server."""
    server = Server(app, host, port)
    await server.start()
    return server
