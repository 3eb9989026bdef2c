"""The per-Agent tool host: started on the first run that needs it, reclaimed by ``agent.close()``.

It owns the in-process MCP handler, the loopback MCP server and its bearer token (both imported only here, lazily),
and the calls in flight. The HTTP server and the token exist only once a run's driver needs them: a driver that
carries MCP messages on its CLI's own channel (``Descriptor.host_tools_channel``, Claude) never causes a port to be
bound or a token to be minted. Each CLI reaches the tools under a route named after its Thread, so a call can
report Notices to the run that caused it and is cancelled with that run.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._events import Notice
from ..driver._hosted import HostedTools
from ..driver._mcp import secret_var
from ._define import Tool
from ._invoke import CallOutcome, call_tool
from ._keepalive import INTERVAL

if TYPE_CHECKING:
    from ._http import ToolServer
    from ._inproc import InProcessTools

__all__ = ["ToolHost"]

NoticeSink = Callable[[Notice], None]


def route_of(key: str) -> str:
    """A URL-safe, stable route for a Thread key (or a run id)."""
    return hashlib.sha256(key.encode()).hexdigest()[:20]


class ToolHost:
    """Hosts one Agent's tools for all its runs."""

    def __init__(self, tools: tuple[Tool, ...]) -> None:
        self.tools: dict[str, Tool] = {t.name: t for t in tools}
        self._token: str | None = None
        self._token_env = secret_var("pytools", "bearer", "token")
        self._server: ToolServer | None = None
        self._inproc: InProcessTools | None = None
        self._lock: asyncio.Lock | None = None
        self._sinks: dict[str, NoticeSink] = {}
        self._calls: dict[str, set[asyncio.Task[CallOutcome]]] = {}
        self._failures: dict[str, list[tuple[str, str]]] = {}  # per route: (tool, text) of error answers
        self.closed = False
        self.keepalive = INTERVAL
        """Seconds between progress notifications while a call runs (0: none); read when the server starts."""

    @property
    def started(self) -> bool:
        """Whether the host serves its tools (in-process, and over HTTP when a run needed it)."""
        return self._inproc is not None

    @property
    def listening(self) -> bool:
        """Whether the loopback HTTP server has been started (a socket is bound)."""
        return self._server is not None

    @property
    def port(self) -> int:
        return self._server.port if self._server is not None else 0

    @property
    def keepalives(self) -> int:
        """Progress notifications the server has sent during calls so far."""
        return self._server.keepalives if self._server is not None else 0

    @property
    def token(self) -> str | None:
        """The bearer token of the HTTP server; None until that server is started."""
        return self._token

    async def ensure(self, *, http: bool = True) -> None:
        """Make the tools servable (on the running loop): in-process always, over HTTP when ``http`` asks for it."""
        if self._inproc is not None and (self._server is not None or not http):
            return
        if self.closed:
            raise RuntimeError("the Agent's tool host is closed")
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._inproc is None:
                from ._inproc import InProcessTools  # the mcp package loads here, only for Agents with tools
                from ._listing import mcp_tools

                self._inproc = InProcessTools("adaptor_nb-tools", mcp_tools(self.tools.values()), self._on_call)
            if http and self._server is None:
                await self._listen()

    async def _listen(self) -> None:
        from ._http import ToolServer
        from ._listing import mcp_tools

        token = self._token or secrets.token_urlsafe(32)
        server = ToolServer("adaptor_nb-tools", mcp_tools(self.tools.values()), self._on_call, token)
        server.keepalive = self.keepalive
        await server.start()
        self._token, self._server = token, server

    def hosted(self, key: str) -> HostedTools:
        """What the driver needs for a run of Thread (or run) ``key``; call after :meth:`ensure`.

        Without the HTTP server (a channel driver's run) the url and the token are empty."""
        assert self._inproc is not None
        return HostedTools(
            url=self._server.url(route_of(key)) if self._server is not None else "",
            token_env=self._token_env,
            token=self._token or "",
            names=tuple(self.tools),
            approval=frozenset(n for n, t in self.tools.items() if t.requires_approval),
            call_timeout=self._call_timeout(),
            serve=self._inproc.serve_for(route_of(key)),
            failed=functools.partial(self._failed, route_of(key)),
        )

    def _failed(self, route: str, name: str, text: str) -> bool:
        """Whether a call of ``name`` under ``route`` was answered with error ``text``; the answer is counted once."""
        found = self._failures.get(route, [])
        if (name, text) not in found:
            return False
        found.remove((name, text))
        return True

    def _call_timeout(self) -> float:
        limits = [t.timeout for t in self.tools.values()]
        if any(limit is None for limit in limits):
            return 86400.0
        return max(limit for limit in limits if limit is not None) + 30.0

    def attach(self, key: str, sink: NoticeSink) -> None:
        """Route Notices of calls under ``key`` to the run now using it."""
        self._sinks[route_of(key)] = sink

    def detach(self, key: str, *, cancel: bool) -> None:
        """The run ended: forget its sink and, when it was cancelled, cancel its calls in flight."""
        route = route_of(key)
        self._sinks.pop(route, None)
        self._failures.pop(route, None)
        if cancel:
            for task in list(self._calls.get(route, ())):
                task.cancel()

    async def _on_call(self, route: str, name: str, arguments: Any) -> CallOutcome:
        t = self.tools.get(name)
        if t is None:
            return CallOutcome(text=f"unknown tool {name!r}", is_error=True, kind="invalid_args")
        task = asyncio.ensure_future(call_tool(t, arguments))
        calls = self._calls.setdefault(route, set())
        calls.add(task)
        try:
            await asyncio.wait({task})
        finally:
            calls.discard(task)
        if task.cancelled():
            outcome = CallOutcome(text=f"tool {name!r} was cancelled", is_error=True, kind="cancelled")
        else:
            outcome = task.result()
        if outcome.is_error:
            self._failures.setdefault(route, []).append((name, outcome.text))
        if outcome.notice:
            sink = self._sinks.get(route)
            if sink is not None:
                sink(Notice(kind="tool.error", text=outcome.notice, data={"tool": name, "outcome": outcome.kind}))
        return outcome

    async def close(self) -> None:
        """Cancel the calls in flight and stop the server. Idempotent."""
        self.closed = True
        for calls in self._calls.values():
            for task in list(calls):
                task.cancel()
        self._inproc = None
        server, self._server = self._server, None
        if server is not None:
            await server.close()
