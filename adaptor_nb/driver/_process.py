"""A CLI child process with bounded shutdown, unbounded line reading and a stderr tail."""

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

READ_CHUNK = 1 << 16
STDERR_TAIL_BYTES = 8192

# Every process still running when the interpreter exits (a kernel shut down mid-run) is killed with its group.
_LIVE: weakref.WeakSet[CLIProcess] = weakref.WeakSet()


@atexit.register
def _reap_at_exit() -> None:
    for proc in list(_LIVE):
        if proc.proc.returncode is None:
            proc.kill_now()


class CLIProcess:
    """One provider process in its own process group.

    ``lines()`` yields stdout lines of any length (a 5 MB line is fine); stderr is drained in the background
    into a bounded tail and handed to ``on_stderr``; ``close()`` closes stdin, then SIGTERM, then SIGKILL on the
    group, each with a deadline, so nothing outlives it.
    """

    def __init__(self, proc: asyncio.subprocess.Process, argv: list[str], on_stderr: Callable[[bytes], None] | None):
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
        _LIVE.add(self)

    @classmethod
    async def start(
        cls,
        argv: list[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        on_stderr: Callable[[bytes], None] | None = None,
    ) -> CLIProcess:
        """Spawn ``argv`` with pipes on all three streams, in a new session (process group)."""
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
        return cls(proc, argv, on_stderr)

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
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(sig)

    async def close(self, grace: float = 2.0, *, term_wait: float = 2.0) -> int | None:
        """Close stdin, wait ``grace`` s, SIGTERM the group, wait, SIGKILL. Always reaps; safe to call twice."""
        self.closed = True
        try:
            self.close_stdin()
            if self.proc.returncode is None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self.proc.wait(), grace)
            if self.proc.returncode is None:
                self._signal_group(signal.SIGTERM)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self.proc.wait(), term_wait)
            if self.proc.returncode is None:
                self._signal_group(signal.SIGKILL)
                await self.proc.wait()
            else:
                # The leader is gone; make sure no child it left in the group survives.
                self._signal_group(signal.SIGKILL)
        finally:
            await self.wait_stderr(0.5)
            if not self._stderr_task.done():
                self._stderr_task.cancel()
        return self.proc.returncode

    def kill_now(self) -> None:
        """SIGKILL the group without waiting (for use from synchronous cleanup)."""
        self.closed = True
        self._signal_group(signal.SIGKILL)
