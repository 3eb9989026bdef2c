"""A CLI process played inside this process: asyncio pipe and process transports with no OS process behind them.

A replayed run needs no CLI: the cassette answers the driver's stdin with the recorded stdout. Starting a player
process for that costs a Python start (10-20 ms) and a pipe round trip per line the driver writes. A ``StandIn``
plays the same recording from inside the event loop instead. ``CLIProcess.start`` wraps it in the transports
``asyncio.subprocess`` expects, so the driver's reader, writer, exit and stderr handling run unchanged: stdout and
stderr arrive through the real stream protocol, a write to stdin reaches the stand-in, and the exit code comes
back through ``Process.wait()``.

There is no process to signal: the pid is one no process can have (above Linux's largest), signals go to the
stand-in (TERM, KILL, INT and HUP end it as they would end a CLI), and there are no descendants to look for.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import Any, Protocol

# Linux pids never exceed PID_MAX_LIMIT (2**22), so these name no process: a stray kill() finds nothing.
_FIRST_PID = (1 << 22) + 1
_pids = [_FIRST_PID]
_ENDING = frozenset({signal.SIGTERM, signal.SIGKILL, signal.SIGINT, signal.SIGHUP})


class StandInIO(Protocol):
    """What a stand-in writes to: the CLI's stdout and stderr, and its exit."""

    def out(self, data: bytes) -> None: ...

    def err(self, data: bytes) -> None: ...

    def exit(self, returncode: int) -> None: ...


class StandIn(Protocol):
    """Plays a CLI in-process. ``begin`` starts it; then it hears the driver's stdin and the signals sent to it."""

    def begin(self, io: StandInIO) -> None: ...

    def stdin(self, data: bytes) -> None: ...

    def stdin_closed(self) -> None: ...

    def signal(self, sig: int) -> None: ...


class _ReadPipe(asyncio.ReadTransport):
    """The CLI's stdout or stderr as the stream reader sees it."""

    def __init__(self) -> None:
        super().__init__()
        self.closed = False

    def is_reading(self) -> bool:
        return not self.closed

    def pause_reading(self) -> None:
        pass  # a recording is in memory already: holding it back saves nothing

    def resume_reading(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


class _WritePipe(asyncio.WriteTransport):
    """The CLI's stdin: what the driver writes reaches the stand-in within the write (a pipe with the CLI always
    reading). Its answer comes back through the stream protocol, as a CLI's would."""

    def __init__(self, owner: StandInTransport) -> None:
        super().__init__()
        self._owner = owner
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self.closed and data:
            self._owner.to_stdin(bytes(data))

    def writelines(self, list_of_data: Any) -> None:
        for data in list_of_data:
            self.write(data)

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        self.close()

    def get_write_buffer_size(self) -> int:
        return 0

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return (0, 0)

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def abort(self) -> None:
        self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._owner.stdin_lost()

    def is_closing(self) -> bool:
        return self.closed


class StandInTransport(asyncio.SubprocessTransport):
    """The process transport of a stand-in, for ``asyncio.subprocess.Process`` and its stream protocol."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, protocol: asyncio.SubprocessProtocol, stand_in: StandIn
    ) -> None:
        super().__init__()
        self._loop = loop
        self._protocol = protocol
        self._stand_in = stand_in
        self._pid = _pids[0]
        _pids[0] += 1
        self._returncode: int | None = None
        self._stdin = _WritePipe(self)
        self._stdout = _ReadPipe()
        self._stderr = _ReadPipe()
        self._waiters: list[asyncio.Future[int]] = []
        self._closed = False
        protocol.connection_made(self)
        loop.call_soon(stand_in.begin, self)

    # -- what the stand-in calls -----------------------------------------------------------------------------

    def out(self, data: bytes) -> None:
        if data and not self._stdout.closed:
            self._protocol.pipe_data_received(1, data)

    def err(self, data: bytes) -> None:
        if data and not self._stderr.closed:
            self._protocol.pipe_data_received(2, data)

    def exit(self, returncode: int) -> None:
        """The CLI ends: its output closes, stdin stops taking lines, and ``wait()`` returns ``returncode``."""
        if self._returncode is not None:
            return
        for fd, pipe in ((1, self._stdout), (2, self._stderr)):
            if not pipe.closed:
                pipe.closed = True
                self._protocol.pipe_connection_lost(fd, None)
        self._returncode = returncode
        self._protocol.process_exited()
        if not self._stdin.closed:
            self._stdin.closed = True
            self._protocol.pipe_connection_lost(0, None)
        self._protocol.connection_lost(None)
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(returncode)
        self._waiters.clear()

    # -- what the driver's side calls ------------------------------------------------------------------------

    def to_stdin(self, data: bytes) -> None:
        if self._returncode is None:
            self._stand_in.stdin(data)

    def stdin_lost(self) -> None:
        self._protocol.pipe_connection_lost(0, None)
        if self._returncode is None:
            self._loop.call_soon(self._stand_in.stdin_closed)

    def get_pid(self) -> int:
        return self._pid

    def get_returncode(self) -> int | None:
        return self._returncode

    def get_pipe_transport(self, fd: int) -> asyncio.BaseTransport | None:
        return {0: self._stdin, 1: self._stdout, 2: self._stderr}.get(fd)

    def send_signal(self, signal: int) -> None:
        if self._returncode is None:
            self._stand_in.signal(signal)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def close(self) -> None:
        self._closed = True

    def is_closing(self) -> bool:
        return self._closed

    async def _wait(self) -> int:
        """``Process.wait()`` calls this (asyncio's own process transports have it too)."""
        if self._returncode is not None:
            return self._returncode
        waiter: asyncio.Future[int] = self._loop.create_future()
        self._waiters.append(waiter)
        return await waiter


def ends_on(sig: int) -> bool:
    """Whether a CLI would end on ``sig`` (the stand-in then exits with ``-sig``)."""
    return sig in _ENDING


def start(
    loop: asyncio.AbstractEventLoop, factory: Callable[[], asyncio.SubprocessProtocol], stand_in: StandIn
) -> tuple[StandInTransport, asyncio.SubprocessProtocol]:
    """The transport and protocol of ``stand_in``, as ``loop.subprocess_exec`` would return them for a process."""
    protocol = factory()
    return StandInTransport(loop, protocol, stand_in), protocol
