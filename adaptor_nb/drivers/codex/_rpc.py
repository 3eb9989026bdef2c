"""JSON-RPC over the app-server's stdio: numbered requests, notifications and server requests in arrival order."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...driver import (
    CLIProcess,
    LineTooLong,
)

OVERLOADED = -32001
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
DEFAULT_RETRY_DELAYS = (0.05, 0.1, 0.2, 0.4, 0.8)


class RpcError(Exception):
    """The app-server answered a request with a JSON-RPC error."""

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{method}: {message} (code {code})")
        self.method = method
        self.code = code
        self.message = message
        self.data = data


class ServerClosedError(Exception):
    """The app-server process ended (or its pipe broke) while a request was outstanding."""

    def __init__(self, returncode: int | None, stderr_tail: str, reason: str = "") -> None:
        super().__init__(f"codex app-server {reason or 'exited'} (exit code {returncode})")
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        self.reason = reason  # why it was stopped, when adaptor_nb stopped it (a stdout line over the bound)


@dataclass(frozen=True)
class Notification:
    """A server notification."""

    method: str
    params: dict[str, Any]


@dataclass(frozen=True)
class ServerRequest:
    """A request the server sends to the client (approvals and similar); answer it exactly once."""

    id: int | str
    method: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Garbage:
    """A stdout line that is not a JSON-RPC message."""

    line: bytes


@dataclass(frozen=True)
class Closed:
    """stdout reached EOF: the process is gone."""

    returncode: int | None
    stderr_tail: str = field(repr=False, default="")
    reason: str = ""


@dataclass(frozen=True)
class Wakeup:
    """A signal a run puts on the inbound queue so that one consumer sees everything in order."""

    kind: str
    payload: Any = None


Inbound = Notification | ServerRequest | Garbage | Closed | Wakeup


def _code(value: Any) -> int:
    """An error response's code; a server that sends a string, null or list there gets the generic -32603."""
    if type(value) is int:
        return value
    if isinstance(value, str) and value.lstrip("-").isdigit() and len(value) < 12:
        return int(value)
    return INTERNAL_ERROR


class RpcClient:
    """Talks JSON-RPC to one app-server process.

    Responses resolve their request; notifications, server requests, unparseable lines and EOF are put on
    ``inbound`` in the order they arrived. A request answered with ``-32001`` (server overloaded) is retried after
    each delay in ``retry_delays``, then the error is raised.
    """

    def __init__(
        self,
        proc: CLIProcess,
        *,
        on_stdout: Callable[[bytes], None] | None = None,
        retry_delays: Sequence[float] = DEFAULT_RETRY_DELAYS,
    ) -> None:
        self.proc = proc
        self.inbound: asyncio.Queue[Inbound] = asyncio.Queue()
        self.retry_delays = tuple(retry_delays)
        self.closed = False
        self.eof = False
        self._on_stdout = on_stdout
        self._pending: dict[int, tuple[str, asyncio.Future[Any]]] = {}
        self._next_id = 0
        self._reader: asyncio.Task[None] | None = None
        self._close_error: ServerClosedError | None = None
        self.overflow: LineTooLong | None = None  # set when the server wrote a line over the bound and was stopped

    def start(self) -> None:
        """Start the reader task (once)."""
        if self._reader is None:
            self._reader = asyncio.get_running_loop().create_task(self._read_loop(), name="codex-rpc-reader")

    async def request(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        """Send a request and return its ``result``; raises RpcError, ServerClosedError or TimeoutError."""
        for delay in (*self.retry_delays, None):
            try:
                return await self._request_once(method, params, timeout)
            except RpcError as exc:
                if exc.code != OVERLOADED or delay is None:
                    raise
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _request_once(self, method: str, params: dict[str, Any] | None, timeout: float | None) -> Any:
        if self._close_error is not None:
            raise self._close_error
        self._next_id += 1
        rid = self._next_id
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[rid] = (method, fut)
        message: dict[str, Any] = {"id": rid, "method": method}
        if params is not None:
            message["params"] = params
        try:
            try:
                await self.proc.write_json(message)
            except (BrokenPipeError, ConnectionResetError) as exc:
                self._pending.pop(rid, None)
                raise await self._closed_error() from exc
            if timeout is None:
                return await fut
            return await asyncio.wait_for(fut, timeout)
        finally:
            self._pending.pop(rid, None)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (no answer expected)."""
        message: dict[str, Any] = {"method": method}
        if params is not None:
            message["params"] = params
        await self._write(message)

    async def respond(self, request_id: int | str, result: Any) -> None:
        """Answer a server request."""
        await self._write({"id": request_id, "result": result})

    async def respond_error(self, request_id: int | str, code: int, message: str) -> None:
        """Refuse a server request with a JSON-RPC error."""
        await self._write({"id": request_id, "error": {"code": code, "message": message}})

    async def _write(self, message: dict[str, Any]) -> None:
        try:
            await self.proc.write_json(message)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise await self._closed_error() from exc

    async def _closed_error(self) -> ServerClosedError:
        """The error describing the exit, once the process has gone (bounded wait)."""
        reader = self._reader
        if self._close_error is None and reader is not None and not reader.done():
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(reader), 3.0)
        return self._close_error or ServerClosedError(self.proc.returncode, self.proc.stderr_tail())

    async def _read_loop(self) -> None:
        try:
            async for line in self.proc.lines():
                if self._on_stdout is not None:
                    self._on_stdout(line)
                try:
                    self._dispatch(line)
                except Exception:  # a line the reader cannot handle is reported, never the end of the reader
                    self.inbound.put_nowait(Garbage(line))
        except LineTooLong as exc:  # CLIProcess has stopped the server; requests and the turn fail naming the bound
            self.overflow = exc
        finally:
            await self._at_eof()

    async def _at_eof(self) -> None:
        self.eof = True
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.proc.proc.wait(), 2.0)
        await self.proc.wait_stderr(0.5)
        reason = str(self.overflow) if self.overflow is not None else ""
        error = ServerClosedError(self.proc.returncode, self.proc.stderr_tail(), reason)
        self._close_error = error
        self.closed = True
        for _, fut in list(self._pending.values()):
            if not fut.done():
                fut.set_exception(error)
        self.inbound.put_nowait(Closed(error.returncode, error.stderr_tail, reason))

    def _dispatch(self, line: bytes) -> None:
        text = line.strip()
        if not text:
            return
        try:
            message = json.loads(text)
        except (ValueError, RecursionError):  # over-deep nesting is a bad line too
            self.inbound.put_nowait(Garbage(line))
            return
        if not isinstance(message, dict):
            self.inbound.put_nowait(Garbage(line))
            return
        method = message.get("method")
        params = message.get("params")
        if not isinstance(params, dict):
            params = {}
        if isinstance(method, str):
            if "id" in message:
                self.inbound.put_nowait(ServerRequest(message["id"], method, params))
            else:
                self.inbound.put_nowait(Notification(method, params))
            return
        rid = message.get("id")
        entry = self._pending.get(rid) if type(rid) is int else None
        if entry is None:
            if rid is None:
                self.inbound.put_nowait(Garbage(line))
            return
        name, fut = entry
        if fut.done():
            return
        error = message.get("error")
        if isinstance(error, dict):
            fut.set_exception(
                RpcError(name, _code(error.get("code")), str(error.get("message", "")), error.get("data"))
            )
        else:
            fut.set_result(message.get("result"))

    async def aclose(self) -> None:
        """Stop the reader (the process itself is closed by its owner)."""
        reader, self._reader = self._reader, None
        if reader is not None and not reader.done():
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
