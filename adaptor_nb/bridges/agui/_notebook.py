"""``%agent serve``: the AG-UI endpoint inside the kernel's own event loop, over the notebook's Agent and threads."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from ..._events import Done, Event, RunStarted
from ...notebook._args import OptionError
from ._app import AguiApp, app
from ._server import Server

if TYPE_CHECKING:
    from ...notebook._session import NotebookSession

USAGE = "usage: %agent serve [--port N] [--thread NAME] [--cors ORIGIN] | %agent serve stop | %agent serve status"

_SERVERS: dict[int, Server] = {}  # id(session) -> its running endpoint


def serve_command(session: NotebookSession, words: list[str]) -> str:
    """Start, stop or describe the notebook's AG-UI endpoint; returns what to print."""
    if words[:1] == ["stop"]:
        return _stop(session)
    if words[:1] == ["status"]:
        server = _SERVERS.get(id(session))
        return f"serving AG-UI at {server.url}" if server is not None else "the AG-UI endpoint is not running"
    port, thread, origins = _options(words)
    if id(session) in _SERVERS:
        return f"already serving at {_SERVERS[id(session)].url}: %agent serve stop first"
    loop = asyncio.get_event_loop()
    endpoint = app(
        lambda: _agent(session),
        thread=thread,
        key=str,  # the threadId names the notebook Thread, so web threads read well in %agent threads
        cors_origins=origins,
        on_event=lambda key, ev: _note(session, endpoint, key, ev),
    )
    server = Server(endpoint, "127.0.0.1", port)
    server.bind()
    _SERVERS[id(session)] = server
    task = loop.create_task(server.start())
    task.add_done_callback(lambda t: _forget_failed(session, server, t))
    pinned = f"\nevery web thread drives the notebook thread {thread!r}" if thread else ""
    return (
        f"serving AG-UI 1.0 at {server.url}\n"
        f"token: {server.token}\n"
        f"send 'Authorization: Bearer <token>'; the input's threadId names the thread{pinned}\n"
        "stop with %agent serve stop"
    )


def _options(words: list[str]) -> tuple[int, str | None, list[str]]:
    port, thread, origins = 0, None, []
    it = iter(words)
    for word in it:
        if word == "--port":
            value = next(it, "")
            if not value.isdigit() or int(value) > 65535:
                raise OptionError(f"%agent serve: --port needs a port number, got {value!r}; {USAGE}")
            port = int(value)
        elif word == "--thread":
            thread = next(it, "")
            if not thread:
                raise OptionError(f"%agent serve: --thread needs a thread name; {USAGE}")
        elif word == "--cors":
            origin = next(it, "")
            if not origin.startswith(("http://", "https://")):
                raise OptionError(f"%agent serve: --cors needs an origin such as http://127.0.0.1:8000; {USAGE}")
            origins.append(origin)
        else:
            raise OptionError(f"%agent serve: unknown option {word!r}; {USAGE}")
    return port, thread, origins


async def _agent(session: NotebookSession) -> Any:
    choice = await session.default_choice()
    return session.agent_for(choice.name, choice.driver)


def _note(session: NotebookSession, endpoint: AguiApp, key: str, event: Event) -> None:
    """Keep the notebook's bookkeeping of web runs, as for a cell's runs: %agent threads and %agent cancel see them."""
    from ...notebook._session import ActiveRun

    if isinstance(event, RunStarted):
        live = endpoint.bridge.lives.get(key)
        if live is not None:
            driver = getattr(live.stream.descriptor, "name", "") or "agui"
            session.active[live.stream.run_id] = ActiveRun(live.stream, None, driver, key)
    elif isinstance(event, Done):
        result = event.result if event.err is None else getattr(event.err, "result", None)
        status = "ok" if event.err is None else type(event.err).__name__
        session.ended(event.meta.run_id, status, result)
        seen = session.threads.get(key)
        if seen is not None:
            seen.last_run = time.time()


def _forget_failed(session: NotebookSession, server: Server, task: asyncio.Task[None]) -> None:
    if _SERVERS.get(id(session)) is server and (task.cancelled() or task.exception() is not None):
        del _SERVERS[id(session)]


def _stop(session: NotebookSession) -> str:
    server = _SERVERS.pop(id(session), None)
    if server is None:
        return "the AG-UI endpoint is not running"
    server.close_listener()  # refused from now on; the runs end and the server drains in the background
    task = asyncio.get_event_loop().create_task(server.stop())
    task.add_done_callback(lambda t: t.cancelled() or t.exception())
    return f"stopping the AG-UI endpoint at {server.url} (its runs are cancelled)"
