"""One CodeBuddy Code process owned by its own reader and writer tasks; runs talk to it through queues."""

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
from ._approvals import deny_response

# Kinds of inbox items (the first element of each tuple).
LINES = 0  # (LINES, raw chunk, [Frame, ...]): decoded stdout lines
STDERR = 1  # (STDERR, chunk)
EOF = 2  # (EOF, return code)
WAKE = 3  # (WAKE, owner, payload): a wake-up posted by the run that reads the inbox

_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_READ = 1 << 18

# A decoded stdout line: a JSON object; the bytes of a line that is not a JSON object; or, for the commonest line
# of all (a top-level text delta in exactly the CLI's own layout), ``(block index, text)`` without the dicts.
Frame = dict[str, Any] | bytes | tuple[int, str]

# The compact layout of a top-level text delta. Only a line that matches it whole takes the short cut;
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
_ANON = re.compile(rb"anonymous_[^\"\\\s,]*").sub
# The CLI re-runs or drops a user line written right after a ``result``; this pause keeps turns in order.
SETTLE_AFTER_RESULT = 0.3


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
                        append((int(index), text))
                        continue
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


class CodeBuddyProcess:
    """A live ``codebuddy-headless --input-format stream-json`` process.

    The reader task decodes stdout into frames and answers the replies to our control requests; everything else
    goes to ``inbox``, which exactly one consumer (the current run, or the settling routine) reads. The writer task
    owns stdin, so a cancelled caller can never leave half a line behind.
    """

    def __init__(self, cli: CLIProcess, fingerprint: str, argv: list[str]) -> None:
        self.cli = cli
        self.fingerprint = fingerprint
        self.argv = argv
        self.inbox: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        self._out: asyncio.Queue[tuple[bytes, bool] | None] = asyncio.Queue()
        self.result_at = 0.0
        self.secrets: tuple[bytes, ...] = ()
        self.init_info: dict[str, Any] = {}
        self._waiters: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._seq = 0
        self.session_id = ""
        self.cost_total = 0.0
        self.num_turns_total = 0  # the CLI's num_turns counts every step since the process started
        self.busy = False
        self.broken = False
        self.returncode: int | None = None
        self.turns_seen = 0
        self._settling: asyncio.Task[None] | None = None
        self.splitter = LineBuffer()
        self.overflow: LineTooLong | None = None  # set when the CLI wrote a line over the bound and was stopped
        loop = asyncio.get_running_loop()
        self.loop = loop
        self._reader = loop.create_task(self._read(), name=f"codebuddy reader {cli.pid}")
        self._writer = loop.create_task(self._write(), name=f"codebuddy writer {cli.pid}")

    @classmethod
    async def spawn(
        cls,
        argv: list[str],
        *,
        cwd: str,
        env: dict[str, str],
        fingerprint: str,
        secrets: tuple[str, ...] = (),
        max_line: int | None = None,
    ) -> CodeBuddyProcess:
        """Start the CLI (its own process group) and its reader/writer tasks; ``secrets`` are redacted from output."""
        holder: list[CodeBuddyProcess] = []

        def on_stderr(chunk: bytes) -> None:
            if holder:
                holder[0].inbox.put_nowait((STDERR, holder[0].redact(chunk)))

        cli = await CLIProcess.start(argv, cwd=cwd, env=env, on_stderr=on_stderr)
        _widen_pipe(cli)
        proc = cls(cli, fingerprint, argv)
        if max_line:
            proc.splitter = LineBuffer(max_line)  # the reader task has not run yet
        proc.secrets = tuple(sorted({v.encode() for v in secrets if len(v) >= 4}, key=len, reverse=True))
        holder.append(proc)
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
        return self.redact(self.cli.stderr_tail().encode()).decode("utf-8", "replace")

    def redact(self, chunk: bytes) -> bytes:
        """``chunk`` with every secret replaced: the CLI echoes its API key (``initialize``, ``X-User-Id``)."""
        for secret in self.secrets:
            if secret in chunk:
                chunk = chunk.replace(secret, b"<redacted>")
        if b"anonymous_" in chunk:  # the account names carry the key's tail
            chunk = _ANON(b"anonymous_<redacted>", chunk)
        return chunk

    # -- stdout ------------------------------------------------------------------------------------------

    async def _read(self) -> None:
        stream = self.cli.proc.stdout
        assert stream is not None
        put = self.inbox.put_nowait
        feed = self.splitter.feed
        try:
            while True:
                chunk = await stream.read(_READ)
                if not chunk:
                    break
                blocks = feed(chunk)
                put((LINES, chunk, self._decode(blocks[0]) if len(blocks) == 1 else self._decode_all(blocks)))
            rest = self.splitter.end()
            if rest:
                put((LINES, b"", self._decode(rest)))
        except LineTooLong as exc:  # the run ends with a failure naming the bound; the CLI is stopped
            self.overflow = exc
            self.broken = True
            await self.cli.stop_reading()
        except Exception as exc:  # a reader must never die silently: report as a broken stream
            self.broken = True
            put((STDERR, f"\n[adaptor_nb] stdout reader failed: {type(exc).__name__}: {exc}\n".encode()))
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
                    fut.set_exception(ConnectionError(f"codebuddy exited (code {rc}) before answering"))
            self._waiters.clear()
            put((EOF, rc))

    def _decode_all(self, blocks: list[bytes]) -> list[Frame]:
        frames: list[Frame] = []
        for block in blocks:
            frames += self._decode(block)
        return frames

    def _decode(self, block: bytes) -> list[Frame]:
        frames, session_id = decode_block(block, self._waiters)
        if session_id:
            self.session_id = session_id
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
                data, is_user = item
                if is_user:
                    wait = self.result_at + SETTLE_AFTER_RESULT - self.loop.time()
                    if wait > 0:
                        await asyncio.sleep(wait)
                stdin.write(data)
                await stdin.drain()
        except (BrokenPipeError, ConnectionResetError, RuntimeError):
            self.broken = True

    def send(self, obj: dict[str, Any]) -> None:
        """Queue one JSON line for stdin (never blocks, never writes half a line)."""
        line = dumps_line(obj)
        self._out.put_nowait((line, obj.get("type") == "user"))

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
            raise RuntimeError(f"codebuddy refused {request.get('subtype')!r}: {resp.get('error')}")
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


def _consume(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()


def _deny_response(frame: dict[str, Any]) -> dict[str, Any]:
    return deny_response(frame, "the run that asked was cancelled")
