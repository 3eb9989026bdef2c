"""A CLI child process with bounded shutdown, unbounded line reading and a stderr tail.

Nothing the CLI starts outlives ``close()``: the process group is signalled, and so is every descendant found
while the CLI runs (including ones that called ``setsid`` and left the group) and every process still holding
one of the CLI's pipes. A CLI that closes stdout but keeps running is closed after ``exit_grace``; a CLI that
exits while a descendant holds its pipes has that descendant killed after ``exit_grace``, so readers see EOF.
A descendant that both left the group and closed its pipes after its parent exited cannot be found (it is
re-parented to init); only a cgroup could reach it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import signal
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import psutil

from . import _tap

READ_CHUNK = 1 << 16
STDERR_TAIL_BYTES = 8192
EXIT_GRACE = 2.0
_PROC_FD = "/proc/self/fd"

# Every process still running when the interpreter exits (a kernel shut down mid-run) is killed with its group.
_LIVE: weakref.WeakSet[CLIProcess] = weakref.WeakSet()


@atexit.register
def _reap_at_exit() -> None:
    for proc in list(_LIVE):
        if proc.proc.returncode is None:
            proc.kill_now()


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The stream protocol plus signals plain asyncio does not give: the leader exited, stdout closed, all closed."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()
        self.stdout_closed: asyncio.Future[None] = loop.create_future()
        self.pipes_closed: asyncio.Future[None] = loop.create_future()
        self.open_pipes = {1, 2}

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        super().pipe_connection_lost(fd, exc)
        self.open_pipes.discard(fd)
        if not self.open_pipes and not self.pipes_closed.done():
            self.pipes_closed.set_result(None)
        if fd == 1 and not self.stdout_closed.done():
            self.stdout_closed.set_result(None)

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


def _pipe_inodes(transport: asyncio.SubprocessTransport) -> set[int]:
    inodes: set[int] = set()
    for fd in (0, 1, 2):
        pipe = transport.get_pipe_transport(fd)
        fileobj: Any = pipe.get_extra_info("pipe") if pipe is not None else None
        with contextlib.suppress(OSError, ValueError, AttributeError):
            inodes.add(os.fstat(fileobj.fileno()).st_ino)
    return inodes


def _pipe_holders(inodes: set[int]) -> list[psutil.Process]:
    """Other processes with one of these pipes open (Linux /proc; empty elsewhere)."""
    if not inodes or not os.path.isdir(_PROC_FD):
        return []
    wanted = {f"pipe:[{ino}]" for ino in inodes}
    me = os.getpid()
    found: list[psutil.Process] = []
    for pid in psutil.pids():
        if pid == me:
            continue
        with contextlib.suppress(OSError, psutil.Error):
            fds = f"/proc/{pid}/fd"
            if any(os.readlink(f"{fds}/{fd}") in wanted for fd in os.listdir(fds)):
                found.append(psutil.Process(pid))
    return found


class CLIProcess:
    """One provider process in its own process group.

    ``lines()`` yields stdout lines of any length (a 5 MB line is fine); stderr is drained in the background
    into a bounded tail and handed to ``on_stderr``; ``close()`` closes stdin, then SIGTERM, then SIGKILL on the
    group, each with a deadline, so nothing outlives it.
    """

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        argv: list[str],
        on_stderr: Callable[[bytes], None] | None,
        *,
        protocol: _Protocol | None = None,
        pipes: set[int] | None = None,
        exit_grace: float = EXIT_GRACE,
    ):
        self.proc = proc
        self.argv = argv
        self._on_stderr = on_stderr
        self._stderr_tail: deque[bytes] = deque()
        self._stderr_size = 0
        self._stderr_task = asyncio.get_running_loop().create_task(self._drain_stderr())
        self._buffer = bytearray()
        self._eof = False
        self._write_lock = asyncio.Lock()
        self.closed = False
        self.exit_grace = exit_grace
        self._pipes = pipes or set()
        self._tracked: dict[int, psutil.Process] = {}
        self._protocol = protocol
        self._watcher = asyncio.get_running_loop().create_task(self._watch(protocol)) if protocol is not None else None
        _LIVE.add(self)

    @classmethod
    async def start(
        cls,
        argv: list[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        on_stderr: Callable[[bytes], None] | None = None,
        exit_grace: float = EXIT_GRACE,
    ) -> CLIProcess:
        """Spawn ``argv`` with pipes on all three streams, in a new session (process group)."""
        loop = asyncio.get_running_loop()
        started = _tap.spawn_args(argv, cwd, env)  # a recorder or a replay stand-in when a cassette is active
        transport, protocol = await loop.subprocess_exec(
            lambda: _Protocol(READ_CHUNK, loop),
            *started,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
        proc = asyncio.subprocess.Process(transport, protocol, loop)
        return cls(proc, argv, on_stderr, protocol=protocol, pipes=_pipe_inodes(transport), exit_grace=exit_grace)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None and not self.closed

    def stderr_tail(self) -> str:
        """The last few KiB of stderr, decoded leniently."""
        return b"".join(self._stderr_tail).decode("utf-8", "replace")[-STDERR_TAIL_BYTES:]

    async def _drain_stderr(self) -> None:
        stream = self.proc.stderr
        if stream is None:
            return
        while True:
            chunk = await stream.read(READ_CHUNK)
            if not chunk:
                return
            self._stderr_tail.append(chunk)
            self._stderr_size += len(chunk)
            while self._stderr_size - len(self._stderr_tail[0]) >= STDERR_TAIL_BYTES and len(self._stderr_tail) > 1:
                self._stderr_size -= len(self._stderr_tail.popleft())
            if self._on_stderr is not None:
                self._on_stderr(chunk)

    async def wait_stderr(self, timeout: float = 1.0) -> None:
        """Give the stderr drain a moment to collect the last bytes after exit."""
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(self._stderr_task), timeout)

    async def readline(self) -> bytes | None:
        """The next stdout line without its newline, or None at EOF. No length limit."""
        stream = self.proc.stdout
        assert stream is not None
        while True:
            idx = self._buffer.find(b"\n")
            if idx >= 0:
                line = bytes(self._buffer[:idx])
                del self._buffer[: idx + 1]
                return line
            if self._eof:
                if self._buffer:
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    return line
                return None
            chunk = await stream.read(READ_CHUNK)
            if not chunk:
                self._eof = True
            else:
                self._buffer += chunk

    async def lines(self) -> AsyncIterator[bytes]:
        while True:
            line = await self.readline()
            if line is None:
                return
            yield line

    async def write(self, data: bytes) -> None:
        """Write raw bytes to stdin; raises BrokenPipeError/ConnectionResetError if the process is gone."""
        stdin = self.proc.stdin
        if stdin is None or stdin.is_closing():
            raise BrokenPipeError("stdin of the CLI process is closed")
        async with self._write_lock:
            stdin.write(data)
            await stdin.drain()

    async def write_json(self, obj: Any) -> None:
        """Write one JSON object as a line."""
        await self.write(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")

    def close_stdin(self) -> None:
        stdin = self.proc.stdin
        if stdin is not None and not stdin.is_closing():
            with contextlib.suppress(Exception):
                stdin.close()

    def _signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)
        if self.proc.returncode is None:
            # os.kill, not Popen.send_signal: that one polls first and can reap the child behind asyncio's back.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.proc.pid, sig)

    def track(self) -> None:
        """Remember the CLI's current descendants, so ones that leave the process group can still be killed."""
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(self.proc.pid).children(recursive=True):
                self._tracked.setdefault(child.pid, child)

    def _signal_leftovers(self, sig: int) -> None:
        """Signal every tracked descendant and every other holder of the CLI's pipes that is still running."""
        targets = dict(self._tracked)
        if self._protocol is None or self._protocol.open_pipes:  # scanning /proc only when a pipe is still held
            targets.update((p.pid, p) for p in _pipe_holders(self._pipes))
        for child in targets.values():
            with contextlib.suppress(psutil.Error):
                child.send_signal(sig)  # psutil checks the pid still names the same process

    async def _watch(self, protocol: _Protocol) -> None:
        """Bound the two waits plain asyncio leaves open: exit after stdout closes, pipes after exit."""
        await asyncio.wait([protocol.exited, protocol.stdout_closed], return_when=asyncio.FIRST_COMPLETED)
        if not protocol.exited.done():
            self.track()
            try:
                await asyncio.wait_for(asyncio.shield(protocol.exited), self.exit_grace)
            except TimeoutError:
                await self._stop(term_wait=self.exit_grace)
        try:
            await asyncio.wait_for(asyncio.shield(protocol.pipes_closed), self.exit_grace)
        except TimeoutError:
            # The CLI is gone but something it started still holds a pipe open: readers would never see EOF.
            self._signal_group(signal.SIGKILL)
            self._signal_leftovers(signal.SIGKILL)

    async def _stop(self, *, term_wait: float) -> None:
        self.track()
        self._signal_group(signal.SIGTERM)
        self._signal_leftovers(signal.SIGTERM)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._exited(), term_wait)
        if self.proc.returncode is None:
            self._signal_group(signal.SIGKILL)
            await self._exited()

    async def _exited(self) -> None:
        """The leader's exit, without waiting for its pipes to close (a descendant may hold them)."""
        if self._protocol is None:
            await self.proc.wait()
        else:
            await asyncio.shield(self._protocol.exited)

    async def close(self, grace: float = 2.0, *, term_wait: float = 2.0) -> int | None:
        """Close stdin, wait ``grace`` s, SIGTERM the group, wait, SIGKILL. Always reaps; safe to call twice."""
        self.closed = True
        try:
            self.track()
            self.close_stdin()
            if self.proc.returncode is None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._exited(), grace)
            if self.proc.returncode is None:
                await self._stop(term_wait=term_wait)
            # The leader is gone; make sure nothing it left behind survives, in the group or outside it.
            self._signal_group(signal.SIGKILL)
            self._signal_leftovers(signal.SIGKILL)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.proc.wait()), term_wait)
        finally:
            await self.wait_stderr(0.5)
            if not self._stderr_task.done():
                self._stderr_task.cancel()
            if self._watcher is not None and self._watcher is not asyncio.current_task():
                self._watcher.cancel()
        return self.proc.returncode

    def kill_now(self) -> None:
        """SIGKILL the group without waiting (for use from synchronous cleanup)."""
        self.closed = True
        self.track()
        self._signal_group(signal.SIGKILL)
        self._signal_leftovers(signal.SIGKILL)
