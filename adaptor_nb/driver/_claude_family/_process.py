"""One Claude-family CLI process: stdout decoded as it arrives, stdin owned by a writer task; runs read an inbox."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from .._jsonline import dumps_line
from .._process import CLIProcess, LineBuffer, LineTooLong
from ._approvals import cancelled_deny
from ._decode import EOF, LINES, STDERR, Frame, decode_block
from ._profile import ClaudeFamilyProfile

_F_SETPIPE_SZ = 1031


class ClaudeFamilyProcess:
    """A live Claude-family CLI (``--input-format stream-json``).

    The reader task decodes stdout into frames and answers the replies to our control requests; everything else
    goes to ``inbox``, which exactly one consumer (the current run, or the settling routine) reads. The writer task
    owns stdin, so a cancelled caller can never leave half a line behind.
    """

    def __init__(
        self,
        cli: CLIProcess,
        fingerprint: str,
        argv: list[str],
        profile: ClaudeFamilyProfile,
        max_line: int | None = None,
    ) -> None:
        self.cli = cli
        self.profile = profile
        self._splitter = LineBuffer(max_line) if max_line else LineBuffer()
        self.overflow: LineTooLong | None = None  # set when the CLI wrote a line over the bound and was stopped
        self._reading_failed = False  # stdout is no longer decoded (a line over the bound, a reader failure)
        self.fingerprint = fingerprint
        self.argv = argv
        self.inbox: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        # (line, loop time before which it may not be written) or None for the end of stdin
        self._out: asyncio.Queue[tuple[bytes, float] | None] = asyncio.Queue()
        self.result_at = -1e9  # loop time of the last ``result`` line (see ClaudeFamilyProfile.settle_after_result)
        self.secrets: tuple[bytes, ...] = ()
        self.redacting = False  # output passes through ``redact`` (secrets, or the profile's own redaction)
        self.init_info: dict[str, Any] = {}  # the reply to the profile's initialize request
        self.num_turns_total = 0  # the CLI's num_turns counts every step since the process started
        self._waiters: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._seq = 0
        self._writing = False  # the writer holds a line it has not finished draining
        self._closing = False  # stdin is to be closed: later lines are queued behind the end, never written
        self.session_id = ""
        self.cost_total = 0.0
        self.busy = False
        self.broken = False
        self.returncode: int | None = None
        self.turns_seen = 0
        self._settling: asyncio.Task[None] | None = None
        loop = asyncio.get_running_loop()
        self.loop = loop
        self._reader = loop.create_task(self._read(), name=f"{profile.name} reader {cli.pid}")
        self._writer = loop.create_task(self._write(), name=f"{profile.name} writer {cli.pid}")

    @classmethod
    async def spawn(
        cls,
        argv: list[str],
        *,
        profile: ClaudeFamilyProfile,
        cwd: str,
        env: dict[str, str],
        fingerprint: str,
        secrets: tuple[str, ...] = (),
        max_line: int | None = None,
    ) -> ClaudeFamilyProcess:
        """Start the CLI (its own process group) and its reader/writer tasks; ``secrets`` are redacted from output."""
        holder: list[ClaudeFamilyProcess] = []
        early: list[bytes] = []  # stdout that came before the process object was made

        def on_stderr(chunk: bytes) -> None:
            if holder:
                proc = holder[0]
                proc.inbox.put_nowait((STDERR, proc.redact(chunk) if proc.redacting else chunk))

        def on_stdout(chunk: bytes) -> None:
            if holder:
                holder[0]._stdout(chunk)
            else:
                early.append(chunk)

        cli = await CLIProcess.start(argv, cwd=cwd, env=env, on_stderr=on_stderr, on_stdout=on_stdout)
        _widen_pipe(cli)
        proc = cls(cli, fingerprint, argv, profile, max_line)
        proc.secrets = tuple(sorted({v.encode() for v in secrets if len(v) >= 4}, key=len, reverse=True))
        proc.redacting = bool(proc.secrets) or profile.redact is not None
        holder.append(proc)
        for chunk in early:
            proc._stdout(chunk)
        return proc

    # -- state -------------------------------------------------------------------------------------------

    @property
    def pid(self) -> int:
        return self.cli.pid

    @property
    def alive(self) -> bool:
        return self.cli.alive and not self.broken and self.returncode is None

    def reusable(self, fingerprint: str) -> bool:
        """Whether a new run with ``fingerprint`` may use this process now or after it settles."""
        same_loop = self.loop is asyncio.get_running_loop() and not self.loop.is_closed()
        return same_loop and self.alive and fingerprint == self.fingerprint

    def stderr_tail(self) -> str:
        tail = self.cli.stderr_tail()
        return self.redact(tail.encode()).decode("utf-8", "replace") if self.redacting else tail

    def redact(self, chunk: bytes) -> bytes:
        """``chunk`` with every secret replaced (a CLI may echo its API key, for example in ``initialize``)."""
        for secret in self.secrets:
            if secret in chunk:
                chunk = chunk.replace(secret, b"<redacted>")
        hook = self.profile.redact
        return chunk if hook is None else hook(chunk)

    # -- stdout ------------------------------------------------------------------------------------------

    def _stdout(self, chunk: bytes) -> None:
        """A stdout chunk, as it arrives: its complete lines are decoded and go to the inbox at once (no reader
        task between the pipe and the run). After a line over the bound or a reader failure the rest is dropped:
        the CLI is being stopped."""
        if self._reading_failed:
            return
        try:
            blocks = self._splitter.feed(chunk)
            self.inbox.put_nowait(
                (LINES, chunk, self._decode(blocks[0]) if len(blocks) == 1 else self._decode_all(blocks))
            )
        except LineTooLong as exc:  # the run ends with a failure naming the bound; the CLI is stopped
            self._reading_failed = True
            self.overflow = exc
            self.broken = True
            self.cli.kill_now()
        except Exception as exc:  # a reader must never fail silently: report as a broken stream
            self._reader_failed(exc)

    def _reader_failed(self, exc: Exception) -> None:
        self._reading_failed = True
        self.broken = True
        self.inbox.put_nowait((STDERR, f"\n[adaptor_nb] stdout reader failed: {type(exc).__name__}: {exc}\n".encode()))

    async def _read(self) -> None:
        """Waits for the end of stdout (the chunks go through ``_stdout``), then reports the exit."""
        try:
            await self.cli.stdout_closed()
            rest = b"" if self._reading_failed else self._splitter.end()
            if rest:
                self.inbox.put_nowait((LINES, b"", self._decode(rest)))
        except Exception as exc:
            self._reader_failed(exc)
        except asyncio.CancelledError:
            # Cancelled with the CLI still running (an event loop shutting down with a Thread's process parked):
            # the process must not outlive its reader, and the wait below must not wait for ever.
            self.cli.kill_now()
            raise
        finally:
            rc = await self.cli.proc.wait()
            self.returncode = rc
            await self.cli.wait_stderr(1.0)
            for fut in self._waiters.values():
                if not fut.done():
                    fut.set_exception(ConnectionError(f"{self.profile.name} exited (code {rc}) before answering"))
            self._waiters.clear()
            self.inbox.put_nowait((EOF, rc))

    def _decode_all(self, blocks: list[bytes]) -> list[Frame]:
        frames: list[Frame] = []
        for block in blocks:
            frames += self._decode(block)
        return frames

    def _decode(self, block: bytes) -> list[Frame]:
        frames, session_id = decode_block(block, self._waiters)
        if session_id:
            self.session_id = session_id
        if self.profile.settle_after_result:
            for frame in frames:
                if type(frame) is dict and frame.get("type") == "result":
                    self.result_at = self.loop.time()
        return frames

    # -- stdin -------------------------------------------------------------------------------------------

    async def _write(self) -> None:
        stdin = self.cli.proc.stdin
        assert stdin is not None
        try:
            while True:
                item = await self._out.get()
                if item is None:
                    return
                self._writing = True
                data, not_before = item
                if not_before:
                    wait = not_before - self.loop.time()
                    if wait > 0:
                        await asyncio.sleep(wait)
                stdin.write(data)
                await stdin.drain()
                self._writing = False
        except (BrokenPipeError, ConnectionResetError, RuntimeError):
            self.broken = True
        finally:
            self._closing = True  # nothing is written past the writer's end

    def send(self, obj: dict[str, Any]) -> None:
        """Queue one JSON line for stdin (never blocks, never writes half a line)."""
        data = dumps_line(obj)
        not_before = 0.0
        settle = self.profile.settle_after_result
        if settle and obj.get("type") == "user":
            not_before = self.result_at + settle  # the CLI re-runs or drops a user line written sooner
            if not_before <= self.loop.time():
                not_before = 0.0
        stdin = self.cli.proc.stdin
        if not_before or self._writing or self._closing or not self._out.empty() or stdin is None or not _idle(stdin):
            self._out.put_nowait((data, not_before))
            return
        # Nothing queued, nothing in flight, the pipe took everything so far: the line goes to the transport now
        # (whole: it keeps what the pipe does not take), without waking the writer. If the pipe did not take it
        # all, or the write failed, the writer drains (and finds the failure) before any later line is written,
        # as when it writes the line itself.
        stdin.write(data)
        if not _idle(stdin):
            self._out.put_nowait((b"", 0.0))

    async def control(self, request: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        """Send a control request and return the CLI's ``response`` object (raises on error or timeout)."""
        self._seq += 1
        rid = f"adaptor_req_{self._seq}"
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters[rid] = fut
        self.send({"type": "control_request", "request_id": rid, "request": request})
        try:
            resp = await asyncio.wait_for(fut, timeout)
        finally:
            self._waiters.pop(rid, None)
        if resp.get("subtype") == "error":
            raise RuntimeError(f"{self.profile.name} refused {request.get('subtype')!r}: {resp.get('error')}")
        body = resp.get("response")
        return body if isinstance(body, dict) else {}

    def interrupt_soon(self) -> asyncio.Task[dict[str, Any]]:
        """Ask the CLI to stop the running turn; the task resolves when it acknowledged."""
        task = asyncio.get_running_loop().create_task(self.control({"subtype": "interrupt"}))
        task.add_done_callback(_consume)
        return task

    # -- settling and shutdown ---------------------------------------------------------------------------

    def settle_in_background(self, grace: float, on_failure: Callable[[], None]) -> None:
        """After an abandoned run: interrupt the turn and drain to its result, so the next run finds it idle."""
        if self._settling is not None and not self._settling.done():
            return
        self._settling = asyncio.get_running_loop().create_task(self._settle(grace, on_failure))

    async def _settle(self, grace: float, on_failure: Callable[[], None]) -> None:
        try:
            if self.busy and self.alive:
                interrupt = self.interrupt_soon()
                async with asyncio.timeout(max(grace, 1.0)):
                    while self.busy:
                        item = await self.inbox.get()
                        if item[0] == EOF:
                            break
                        if item[0] == LINES:
                            for frame in item[2]:
                                if type(frame) is dict and frame.get("type") == "result":
                                    self.busy = False
                                elif type(frame) is dict and frame.get("type") == "control_request":
                                    self.send(cancelled_deny(frame, self.profile))
                with contextlib.suppress(BaseException):
                    await interrupt
            if self.busy or not self.alive:
                on_failure()
        except (TimeoutError, Exception):
            on_failure()

    async def settled(self, timeout: float) -> bool:
        """Wait for a background settle to finish; False if the process is not idle and healthy afterwards."""
        task = self._settling
        if task is not None and not task.done():
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(task), timeout)
        return self.alive and not self.busy

    async def close(self, grace: float = 2.0) -> int | None:
        """Close stdin and reap the process group (TERM, then KILL after deadlines); idempotent."""
        if self._settling is not None and not self._settling.done():
            self._settling.cancel()
            with contextlib.suppress(BaseException):
                await self._settling
        self._closing = True
        self._out.put_nowait(None)
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(self._writer), 0.5)
        if not self._writer.done():
            self._writer.cancel()
        rc = await self.cli.close(grace, term_wait=grace)
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(self._reader), 2.0)
        if not self._reader.done():
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader
        self.returncode = rc
        return rc

    def kill_now(self) -> None:
        """SIGKILL the group at once (for synchronous emergency cleanup)."""
        self.cli.kill_now()


def _widen_pipe(cli: CLIProcess) -> None:
    """Ask Linux for a 1 MiB stdout pipe: fewer wake-ups when the CLI writes fast (best effort, elsewhere a no-op)."""
    try:
        import fcntl

        transport = cli.proc._transport  # type: ignore[attr-defined]
        pipe = transport.get_pipe_transport(1).get_extra_info("pipe")
        fcntl.fcntl(pipe.fileno(), _F_SETPIPE_SZ, 1 << 20)
    except Exception:
        pass


def _idle(stdin: asyncio.StreamWriter) -> bool:
    """Whether a line can go to ``stdin``'s transport at once: it is open and holds nothing unwritten."""
    transport = stdin.transport
    return not transport.is_closing() and transport.get_write_buffer_size() == 0


def _consume(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()
