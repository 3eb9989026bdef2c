"""A CLI child process with bounded shutdown, bounded line reading and a stderr tail.

Nothing the CLI starts outlives ``close()``: the process group is signalled, and so is every descendant found
while the CLI runs (including ones that called ``setsid`` and left the group) and every process still holding
one of the CLI's pipes. A CLI that closes stdout but keeps running is closed after ``exit_grace``; a CLI that
exits while a descendant holds its pipes has that descendant killed after ``exit_grace``, so readers see EOF.
A descendant that both left the group and closed its pipes after its parent exited is re-parented away from
the CLI: on Linux the CLI runs under a subreaper supervisor (``_supervise``), so such a daemon stays below it and is
ended with the CLI; elsewhere it cannot be found.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import select
import signal
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

from .._enums import FailureReason
from . import _standin, _tap
from ._config import MAX_LINE_BYTES
from ._jsonline import dumps_line
from ._spi import DriverFailure
from ._supervise import supervised

if TYPE_CHECKING:
    import psutil

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


def _pidfd(pid: int) -> int | None:
    """A pidfd on ``pid`` (Linux 5.3+), or None."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None or pid <= 0:
        return None
    try:
        fd: int = opener(pid)
    except OSError:
        return None
    return fd


def _readable(fd: int) -> bool:
    readable, _, _ = select.select([fd], [], [], 0)
    return bool(readable)


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n % (1 << 20) == 0 else f"{n} bytes"


class LineTooLong(Exception):
    """A CLI wrote a stdout line longer than the bound (``CommonConfig.max_line_bytes``)."""

    def __init__(self, limit: int, seen: int) -> None:
        super().__init__(
            f"wrote a stdout line longer than {_size(limit)} (Config.max_line_bytes = {limit}; "
            f"{seen} bytes without a newline so far); the process was stopped. "
            "Raise max_line_bytes if the CLI really writes lines that long"
        )
        self.limit = limit
        self.seen = seen

    def failure(
        self, cli: str, *, exit_code: int | None, stderr_tail: str, session_id: str, pid: int | None
    ) -> DriverFailure:
        """The DriverFailure that ends the run, naming the bound (``cli`` is the CLI's display name)."""
        return DriverFailure(
            f"{cli} {self}",
            reason=FailureReason.AGENT_ERROR,
            details={
                "exit_code": exit_code,
                "stderr_tail": stderr_tail,
                "max_line_bytes": self.limit,
                "session_id": session_id,
                "pid": pid,
            },
            session_id=session_id,
        )


class LineBuffer:
    """Splits a byte stream into lines, holding at most ``limit`` bytes of an unfinished line.

    ``feed`` returns the complete lines a chunk finishes, as blocks of lines joined by ``\n`` (without the last
    newline): the line that was unfinished before the chunk comes as a block of its own, the lines wholly inside
    the chunk as another. The unfinished rest is kept as the chunks themselves and joined once, when its newline
    arrives, so a long line is held twice at most for a moment. A line longer than ``limit`` raises LineTooLong.
    """

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self.limit = limit
        self._tail: list[bytes] = []
        self._tail_size = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        cut = chunk.rfind(b"\n")
        if cut < 0:
            self._tail_size += len(chunk)
            if self._tail_size > self.limit:
                self._overflow(self._tail_size)
            self._tail.append(chunk)
            return []
        if self._tail:
            first = chunk.find(b"\n")
            if self._tail_size + first > self.limit:
                self._overflow(self._tail_size + first)
            self._tail.append(chunk[:first])
            blocks = [b"".join(self._tail)]
            self._tail = []
            if first < cut:
                blocks.append(chunk[first + 1 : cut])
        else:
            blocks = [chunk[:cut]]
        rest = chunk[cut + 1 :]
        self._tail = [rest] if rest else []
        self._tail_size = len(rest)
        return blocks

    def _overflow(self, seen: int) -> None:
        self._tail = []  # the over-long line is dropped at once, not held while the run ends
        self._tail_size = 0
        raise LineTooLong(self.limit, seen)

    def end(self) -> bytes:
        """What is left at EOF (an unfinished last line), or b""."""
        rest = b"".join(self._tail)
        self._tail = []
        self._tail_size = 0
        return rest


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The stream protocol plus signals plain asyncio does not give: the leader exited, stdout closed, all closed.

    With ``on_stdout``, stdout is not buffered for a reader: each chunk goes to ``on_stdout`` as it arrives (the
    stream then only ever sees EOF).
    """

    def __init__(
        self, limit: int, loop: asyncio.AbstractEventLoop, on_stdout: Callable[[bytes], None] | None = None
    ) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()
        self.stdout_closed: asyncio.Future[None] = loop.create_future()
        self.pipes_closed: asyncio.Future[None] = loop.create_future()
        self.open_pipes = {1, 2}
        self._on_stdout = on_stdout

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        sink = self._on_stdout
        if fd == 1 and sink is not None:
            sink(data if type(data) is bytes else data.encode() if isinstance(data, str) else bytes(data))
            return
        super().pipe_data_received(fd, data)

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
    import psutil  # loaded when a close has pipes to look for, not with the driver door

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

    ``lines()`` yields stdout lines up to ``max_line`` bytes (beyond: the CLI is stopped and LineTooLong raised;
    the default is 64 MiB); stderr is drained in the background into a bounded tail and handed to ``on_stderr``;
    ``close()`` closes stdin, then SIGTERM, then SIGKILL on the group, each with a deadline, so nothing outlives it.
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
        max_line: int = MAX_LINE_BYTES,
    ):
        self.proc = proc
        self.argv = argv
        self._on_stderr = on_stderr
        self._stderr_tail: deque[bytes] = deque()
        self._stderr_size = 0
        self._stderr_task = asyncio.get_running_loop().create_task(self._drain_stderr())
        self._splitter = LineBuffer(max_line)
        self._lines: deque[bytes] = deque()
        self._eof = False
        self._write_lock = asyncio.Lock()
        self.closed = False
        self.exit_grace = exit_grace
        self._pipes = pipes or set()
        self._tracked: dict[int, psutil.Process] = {}
        self._protocol = protocol
        self._watcher = asyncio.get_running_loop().create_task(self._watch(protocol)) if protocol is not None else None
        if self.in_os:
            _LIVE.add(self)

    in_os = True
    """Whether an OS process stands behind this one (False for a stand-in played in-process)."""

    @classmethod
    async def start(
        cls,
        argv: list[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        on_stderr: Callable[[bytes], None] | None = None,
        on_stdout: Callable[[bytes], None] | None = None,
        exit_grace: float = EXIT_GRACE,
        max_line: int | None = None,
    ) -> CLIProcess:
        """Spawn ``argv`` with pipes on all three streams, in a new session (process group).

        ``on_stdout``: stdout chunks are handed to it as they arrive, in the event loop's own callback (it must not
        block or raise), instead of being kept for ``readline``/``proc.stdout``; ``stdout_closed()`` then tells
        when the last one came. One hop less per chunk than a reader task.
        """
        loop = asyncio.get_running_loop()
        max_line = max_line or MAX_LINE_BYTES  # the longest stdout line readline() takes (None: the default)
        started = _tap.spawn_args(argv, cwd, env)  # a recorder or a replay stand-in when a cassette is active
        if not isinstance(started, list):
            stand_in, stream = _standin.start(loop, lambda: _Protocol(READ_CHUNK, loop, on_stdout), started)
            assert isinstance(stream, _Protocol)
            played = asyncio.subprocess.Process(stand_in, stream, loop)
            return StandInProcess(played, argv, on_stderr, protocol=stream, exit_grace=exit_grace, max_line=max_line)
        report = supervised(started, exit_grace)
        try:
            transport, protocol = await loop.subprocess_exec(
                lambda: _Protocol(READ_CHUNK, loop, on_stdout),
                *(report.argv if report is not None else started),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=dict(env) if env is not None else None,
                start_new_session=True,
                pass_fds=report.pass_fds if report is not None else (),
            )
        except BaseException:
            if report is not None:
                report.close()
            raise
        proc = asyncio.subprocess.Process(transport, protocol, loop)
        cli = cls(
            proc,
            argv,
            on_stderr,
            protocol=protocol,
            pipes=_pipe_inodes(transport),
            exit_grace=exit_grace,
            max_line=max_line,
        )
        if report is not None:
            try:
                cli.cli_pid = await report.pid(started[0])
                cli._cli_fd = _pidfd(cli.cli_pid)
            except BaseException:
                await cli.close(grace=0, term_wait=exit_grace)
                raise
        return cli

    cli_pid = 0
    """The CLI's own pid when it runs under a supervisor (then ``proc`` is the supervisor's; see ``_supervisor``)."""
    _cli_fd: int | None = None  # a pidfd on the supervised CLI: its exit is seen before the supervisor's

    @property
    def pid(self) -> int:
        """The CLI's pid."""
        return self.cli_pid or self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None and not self.closed

    def has_exited(self) -> bool:
        """Whether the CLI has exited, even if asyncio has not reaped it yet (Linux pidfd; elsewhere only once it
        was reaped)."""
        if self.proc.returncode is not None:
            return True
        if self._cli_fd is not None and _readable(self._cli_fd):
            return True  # the supervised CLI ended; its supervisor ends a moment later
        opener = getattr(os, "pidfd_open", None)
        if opener is None:
            return False
        try:
            fd = opener(self.proc.pid)
        except OSError:
            return True
        try:
            readable, _, _ = select.select([fd], [], [], 0)
            return bool(readable)
        finally:
            os.close(fd)

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
        """The next stdout line without its newline, or None at EOF; LineTooLong past ``max_line`` bytes."""
        stream = self.proc.stdout
        assert stream is not None
        while not self._lines:
            if self._eof:
                return None
            chunk = await stream.read(READ_CHUNK)
            if not chunk:
                self._eof = True
                rest = self._splitter.end()
                if rest:
                    self._lines.append(rest)
                continue
            try:
                blocks = self._splitter.feed(chunk)
            except LineTooLong:
                self._eof = True
                await self.stop_reading()
                raise
            for block in blocks:
                self._lines.extend(block.split(b"\n"))
        return self._lines.popleft()

    async def stdout_closed(self) -> None:
        """Until stdout is closed (the CLI and everything holding its stdout ended): with ``on_stdout``, every
        chunk has been handed on by then."""
        if self._protocol is not None:
            await asyncio.shield(self._protocol.stdout_closed)
        else:
            stream = self.proc.stdout
            while stream is not None and await stream.read(READ_CHUNK):
                pass

    async def stop_reading(self) -> None:
        """Kill the CLI (its group and descendants) and discard the rest of stdout up to EOF.

        For a reader that gives up on the stream (a line over the bound): the pipe must still be read to its end,
        or asyncio never sees it close and the process is never reported as finished.
        """
        self.kill_now()
        stream = self.proc.stdout
        if stream is not None:
            with contextlib.suppress(Exception):
                while await stream.read(READ_CHUNK):
                    pass

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
        await self.write(dumps_line(obj))

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
        import psutil

        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(self.proc.pid).children(recursive=True):
                self._tracked.setdefault(child.pid, child)

    def _signal_leftovers(self, sig: int) -> None:
        """Signal every tracked descendant and every other holder of the CLI's pipes that is still running."""
        import psutil

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
            if self._cli_fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._cli_fd)
                self._cli_fd = None
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


class StandInProcess(CLIProcess):
    """A CLI played in-process by a stand-in (see ``_standin``): signals go to the stand-in, and there is no
    process group, no descendant and no pipe holder to look for."""

    in_os = False

    def has_exited(self) -> bool:
        return self.proc.returncode is not None

    def _signal_group(self, sig: int) -> None:
        if self.proc.returncode is None:
            # a stand-in parked by an event loop that is gone ends without anyone left to tell
            with contextlib.suppress(RuntimeError):
                self.proc.send_signal(sig)

    def track(self) -> None:
        pass

    def _signal_leftovers(self, sig: int) -> None:
        pass
