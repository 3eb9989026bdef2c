"""One Claude Code process owned by its own reader and writer tasks; runs talk to it through queues."""

from __future__ import annotations

import asyncio
import contextlib
import json
import json.decoder
import re
from collections.abc import Callable
from typing import Any

from ...driver import (
    CLIProcess,
    LineBuffer,
    LineTooLong,
    dumps_line,
    loads_line,
)

# Kinds of inbox items (the first element of each tuple).
LINES = 0  # (LINES, raw chunk, [Frame, ...]): decoded stdout lines
STDERR = 1  # (STDERR, chunk)
EOF = 2  # (EOF, return code)
WAKE = 3  # (WAKE, owner, payload): a wake-up posted by the run that reads the inbox

_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

# A decoded stdout line: a JSON object; the bytes of a line that is not a JSON object; or, for the commonest line
# of all (a top-level text delta in exactly the CLI's own layout), ``(block index, [text, ...])`` without the dicts:
# consecutive such lines of one content block share one frame, their texts in order.
Frame = dict[str, Any] | bytes | tuple[int, list[str]]

# The layout Claude Code writes a top-level text delta in. Only a line that matches it whole takes the short cut;
# the text itself is decoded by the json module's own string scanner, so escapes and validation are the same.
_DELTA_HEAD = '{"type":"stream_event","event":{"type":"content_block_delta","index":'
_DELTA_MID = ',"delta":{"type":"text_delta","text":"'
_DELTA_TAIL = re.compile(
    r'\}\},"session_id":"[^"\\\x00-\x1f]*","parent_tool_use_id":null,"uuid":"[^"\\\x00-\x1f]*"\}'
).fullmatch
_F_SETPIPE_SZ = 1031
# A long line whose first non-blank byte is not ``{`` is not a frame; it is not decoded (that would copy it twice).
_BIG_LINE = 1 << 20
_NOT_AN_OBJECT = re.compile(rb"[ \t\r]*[^{ \t\r]").match


def decode_block(block: bytes, waiters: dict[str, asyncio.Future[dict[str, Any]]]) -> tuple[list[Frame], str]:
    """Decode complete stdout lines into frames (see ``Frame``), and the session id of an ``init`` line among them.

    A ``control_response`` that answers one of ``waiters`` resolves it and is not passed on.
    """
    if len(block) > _BIG_LINE and _NOT_AN_OBJECT(block) is not None and block.find(b"\n") < 0:
        return [block], ""  # one long line that cannot be a JSON object: passed on as it is, never decoded
    try:
        lines: list[str] = block.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        lines = [line.decode("utf-8", "surrogateescape") for line in block.split(b"\n")]
    out: list[Frame] = []
    append = out.append
    session_id = ""
    decode = loads_line
    head, head_len, mid, mid_len = _DELTA_HEAD, len(_DELTA_HEAD), _DELTA_MID, len(_DELTA_MID)
    run: tuple[int, list[str]] | None = None  # the text-delta frame the next delta of the same block joins
    for line in lines:
        if not line:
            continue
        if line.startswith(head):
            comma = line.find(",", head_len)
            index = line[head_len:comma]
            if (
                index.isascii()
                and index.isdigit()
                and (index == "0" or index[0] != "0")
                and line.startswith(mid, comma)
            ):
                try:
                    text, end = _scanstring(line, comma + mid_len)
                except ValueError:
                    pass
                else:
                    if _DELTA_TAIL(line, end) is not None:
                        block_index = int(index)
                        if run is not None and run[0] == block_index:
                            run[1].append(text)
                        else:
                            run = (block_index, [text])
                            append(run)
                        continue
        run = None
        try:
            obj = decode(line)  # exactly as json.loads reads it; over-deep nesting is a bad line, not a dead reader
        except ValueError:
            append(line.encode("utf-8", "surrogateescape"))
            continue
        if type(obj) is not dict:
            append(line.encode("utf-8", "surrogateescape"))
            continue
        kind = obj.get("type")
        if kind == "control_response" and waiters:
            resp = obj.get("response")
            rid = resp.get("request_id") if isinstance(resp, dict) else None
            fut = waiters.pop(rid, None) if isinstance(rid, str) else None
            if fut is not None and isinstance(resp, dict):
                if not fut.done():
                    fut.set_result(resp)
                continue
        elif kind == "system" and obj.get("subtype") == "init":
            sid = obj.get("session_id")
            if isinstance(sid, str) and sid:
                session_id = sid
        append(obj)
    return out, session_id


class ClaudeProcess:
    """A live ``claude --input-format stream-json`` process.

    The reader task decodes stdout into frames and answers the replies to our control requests; everything else
    goes to ``inbox``, which exactly one consumer (the current run, or the settling routine) reads. The writer task
    owns stdin, so a cancelled caller can never leave half a line behind.
    """

    def __init__(self, cli: CLIProcess, fingerprint: str, argv: list[str], max_line: int | None = None) -> None:
        self.cli = cli
        self._splitter = LineBuffer(max_line) if max_line else LineBuffer()
        self.overflow: LineTooLong | None = None  # set when the CLI wrote a line over the bound and was stopped
        self._reading_failed = False  # stdout is no longer decoded (a line over the bound, a reader failure)
        self.fingerprint = fingerprint
        self.argv = argv
        self.inbox: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        self._out: asyncio.Queue[bytes | None] = asyncio.Queue()
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
        self._reader = loop.create_task(self._read(), name=f"claude reader {cli.pid}")
        self._writer = loop.create_task(self._write(), name=f"claude writer {cli.pid}")

    @classmethod
    async def spawn(
        cls, argv: list[str], *, cwd: str, env: dict[str, str], fingerprint: str, max_line: int | None = None
    ) -> ClaudeProcess:
        """Start the CLI (its own process group) and its reader/writer tasks."""
        holder: list[ClaudeProcess] = []
        early: list[bytes] = []  # stdout that came before the process object was made

        def on_stderr(chunk: bytes) -> None:
            if holder:
                holder[0].inbox.put_nowait((STDERR, chunk))

        def on_stdout(chunk: bytes) -> None:
            if holder:
                holder[0]._stdout(chunk)
            else:
                early.append(chunk)

        cli = await CLIProcess.start(argv, cwd=cwd, env=env, on_stderr=on_stderr, on_stdout=on_stdout)
        _widen_pipe(cli)
        proc = cls(cli, fingerprint, argv, max_line)
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
        return self.cli.stderr_tail()

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
                    fut.set_exception(ConnectionError(f"claude exited (code {rc}) before answering"))
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
        return frames

    # -- stdin -------------------------------------------------------------------------------------------

    async def _write(self) -> None:
        stdin = self.cli.proc.stdin
        assert stdin is not None
        try:
            while True:
                data = await self._out.get()
                if data is None:
                    return
                self._writing = True
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
        stdin = self.cli.proc.stdin
        if self._writing or self._closing or not self._out.empty() or stdin is None or not _idle(stdin):
            self._out.put_nowait(data)
            return
        # Nothing queued, nothing in flight, the pipe took everything so far: the line goes to the transport now
        # (whole: it keeps what the pipe does not take), without waking the writer. If the pipe did not take it
        # all, or the write failed, the writer drains (and finds the failure) before any later line is written,
        # as when it writes the line itself.
        stdin.write(data)
        if not _idle(stdin):
            self._out.put_nowait(b"")

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
            raise RuntimeError(f"claude refused {request.get('subtype')!r}: {resp.get('error')}")
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
                                    self.send(_deny_response(frame))
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


def _deny_response(frame: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "control_response",
        "response": {
            "subtype": "success",
            "request_id": frame.get("request_id", ""),
            "response": {"behavior": "deny", "message": "the run that asked was cancelled", "interrupt": True},
        },
    }
