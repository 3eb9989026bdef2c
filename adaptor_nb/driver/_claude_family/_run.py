"""One run over a Claude-family process: prompt in, frames out, approvals, the host-tool channel, messages, turns.

The loop reads the process's inbox and hands each item to a named step: text deltas, frames by type, stderr, the
end of stdout and the run's own wake-ups. A CLI's quirks come from its profile; a driver with behaviour of its
own (CodeBuddy's plan review) subclasses ``ClaudeFamilyRun`` and overrides the hooks marked as such.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from ..._enums import Boundary, MessageFailure, NoticeKind, ProcessKind
from ..._errors import AdaptorError
from ..._events import Event, EventMeta, EventSourceMeta, Notice, ProcessInfo
from ..._images import ImageInput
from ..._result import TranscriptItem
from .._claude_stream import ClaudeLikeResult, ClaudeLikeTranslator
from .._emit import TextDeltas
from .._hosted import mark_host_tool
from .._mcp_config import required_mcp_failures
from .._spi import ClaimedMessage, DriverFailure, DriverOutcome, Invocation, RunContext
from ._control import ControlRequests
from ._decode import EOF, LINES, STDERR, WAKE, text_of
from ._input import user_content
from ._process import ClaudeFamilyProcess
from ._steer import Pending, Steering
from ._turns import Finished, TurnEnds

E = TypeVar("E", bound=Event)
_set = object.__setattr__
_METAS: dict[str, EventMeta] = {}


def source_meta(session_id: str) -> EventMeta | None:
    """The meta a driver attaches to a fresh event so the broker records its provider coordinates (one per session:
    a meta is immutable, so every run of a session shares it)."""
    if not session_id:
        return None
    meta = _METAS.get(session_id)
    if meta is None:
        if len(_METAS) >= 1024:
            _METAS.clear()
        meta = _METAS[session_id] = EventMeta(source=EventSourceMeta(thread_id=session_id))
    return meta


class ClaudeFamilyRun(Steering, ControlRequests, TurnEnds):
    """Drives one run to its end on ``proc``; ``execute()`` returns a DriverOutcome or raises DriverFailure."""

    def __init__(
        self,
        proc: ClaudeFamilyProcess,
        ctx: RunContext,
        inv: Invocation,
        translator: ClaudeLikeTranslator,
        *,
        resuming: bool,
        startup_timeout: float,
        idle_timeout: float | None,
    ) -> None:
        self.proc = proc
        self.profile = proc.profile
        self.ctx = ctx
        self.inv = inv
        self.resuming = resuming
        self.startup_timeout = startup_timeout
        self.idle_timeout = idle_timeout
        self.tr = translator
        self.pending: dict[str, Pending] = {}
        self.prompt_uuid = ""
        self.echo_supported = self.profile.echoes_input
        self.interrupt_claims: list[ClaimedMessage] = []
        self.interrupting = False
        self.user_interrupted = ""
        self.approval_tasks: dict[str, asyncio.Task[None]] = {}
        self.mcp_tasks: dict[str, asyncio.Task[None]] = {}
        self.withdrawn: set[str] = set()
        self.last: ClaudeLikeResult | None = None
        self.session_id = proc.session_id or ""
        # One meta per provider session, shared by every event of it: the broker keeps its source when it stamps.
        self.source_meta: EventMeta | None = source_meta(self.session_id)
        self.protocol_errors = 0
        self.saw_output = False
        self.turn_active = False
        self.cost = 0.0
        self.exit_code: int | None = None
        self._in_tool_phase = False
        self._unwatch: Callable[[], None] | None = None  # stops the message watch, while one is set
        self._startup: asyncio.TimerHandle | None = None  # the startup_timeout's timer, from the first wait
        self._watching: frozenset[Boundary] | None = frozenset()  # None: the watch fired
        self._outcome: DriverOutcome | None = None
        self._failure: BaseException | None = None
        self.init_steering()

    # -- entry -------------------------------------------------------------------------------------------

    async def execute(self) -> DriverOutcome:
        """Write the prompt and follow the CLI until the run's last turn ended."""
        self.prompt_uuid = self._write_user(self.inv.prompt, [], Boundary.IN_RUN, "prompt", images=self.inv.images)
        try:
            await self._loop()
        except Finished:
            pass
        if self._failure is not None:
            raise self._failure
        assert self._outcome is not None
        return self._outcome

    async def close(self) -> None:
        """Stop helper tasks (message watch, approvals and host-tool calls still waiting) and the startup timer."""
        if self._startup is not None:
            self._startup.cancel()
        self._stop_watching()
        helpers = (*self.approval_tasks.values(), *self.mcp_tasks.values(), *self.steer_tasks())
        tasks = [t for t in helpers if t is not None and not t.done()]
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(BaseException):
                await t

    def fail_unsettled(self, reason: MessageFailure) -> None:
        """Acknowledge claimed messages that never reached the CLI (or whose fate is unknown)."""
        msgs = self.ctx.messages
        if msgs is None:
            return
        leftovers = [m for p in self.pending.values() for m in p.claimed] + self.interrupt_claims
        leftovers += self.drop_steers()
        self.pending.clear()
        self.interrupt_claims = []
        for m in leftovers:
            with contextlib.suppress(RuntimeError):
                msgs.failed(m, reason)

    # -- the loop ----------------------------------------------------------------------------------------

    async def _loop(self) -> None:
        while True:
            item = await self._next()
            kind = item[0]
            if kind == LINES:
                await self._lines(item[1], item[2])
            elif kind == STDERR:
                await self._stderr(item[1])
            elif kind == EOF:
                await self._eof(item[1])
            elif kind == WAKE and item[1] is self:
                await self._wake(item[2])

    async def _next(self) -> tuple[Any, ...]:
        inbox = self.proc.inbox
        if not inbox.empty():
            return inbox.get_nowait()
        if not self.saw_output:
            # One timer from the first wait of the run to its first frame (not one per wait): when it fires before
            # any output, the wake-up it posts ends the run.
            if self._startup is None:
                self._startup = self.proc.loop.call_later(
                    self.startup_timeout, inbox.put_nowait, (WAKE, self, "startup_timeout")
                )
            return await inbox.get()
        if self.idle_timeout is None or self.approval_tasks:
            return await inbox.get()
        try:
            async with asyncio.timeout(self.idle_timeout):  # a timer on this task: no task of its own for the wait
                return await inbox.get()
        except TimeoutError:
            raise self._silent(self.idle_timeout, "idle_timeout") from None

    def _silent(self, timeout: float, what: str) -> DriverFailure:
        return DriverFailure(
            f"{self.profile.label} wrote nothing for {timeout:g} s ({what}); "
            "the process is stuck or waiting on the network",
            details={"stderr_tail": self.proc.stderr_tail(), "timeout": what, "pid": self.proc.pid},
            session_id=self.session_id,
        )

    async def _lines(self, raw: bytes, frames: list[Any]) -> None:
        """One stdout chunk: its raw bytes for the tap, then its frames in order."""
        if raw:
            self.ctx.raw_stdout(self.proc.redact(raw) if self.proc.redacting else raw)
        for frame in frames:
            ft = type(frame)
            if ft is tuple:
                await self._texts(frame[0], frame[1])
            elif ft is not dict:
                await self._not_json(frame)
            else:
                self.saw_output = True
                try:
                    await self._dispatch(frame.get("type"), frame)
                except (Finished, DriverFailure, AdaptorError):
                    raise  # the run's own ends (a result, a failure, a refused resume) pass through
                except Exception as exc:  # a frame with wrong-typed fields is reported and skipped
                    await self._bad_frame(frame, exc)

    async def _texts(self, index: int, texts: list[str]) -> None:
        """Top-level text deltas of one content block, as the decoder gives them: the one place they become events."""
        self.saw_output = True
        blk = self.tr.blocks.get(index)
        if blk is None:
            return
        blk.parts += texts
        await self.ctx.emit_many(TextDeltas(texts, self.tr.msg_id, self.source_meta))

    async def _stderr(self, chunk: bytes) -> None:
        self.ctx.raw_stderr(chunk)
        await self.ctx.emit(ProcessInfo(kind=ProcessKind.STDERR, text=chunk.decode("utf-8", "replace"), bytes=chunk))

    def _sourced(self, ev: E) -> E:
        """``ev`` (a fresh payload) carrying the provider session as its source meta (host tools by their name)."""
        ev = mark_host_tool(ev, self.inv.tools)
        meta = self.source_meta
        if meta is not None and ev.meta.source is None:
            _set(ev, "meta", meta)
        return ev

    async def _emit_all(self, events: list[Event]) -> None:
        for ev in events:
            await self.ctx.emit(self._sourced(ev))

    async def _dispatch(self, t: Any, frame: dict[str, Any]) -> None:
        tr = self.tr
        if t == "stream_event":
            await self._stream_event(frame)
        elif t == "assistant":
            self.note_assistant(frame)
            await self._emit_all(tr.assistant(frame))
            if tr.open_tools and not self._in_tool_phase:
                self._tool_phase()
        elif t == "user":
            await self._user(frame)
        elif t == "system":
            await self._system(frame)
        elif t == "result":
            await self._result(frame)
        elif t == "control_request":
            self._control_request(frame)
        elif t == "control_cancel_request":
            rid = str(frame.get("request_id") or "")
            self.withdrawn.add(rid)
            self.ctx.approvals.withdraw(rid)
        elif t == "control_response":
            return  # the CLI echoes our own replies; answers to our requests never get here
        else:
            await self._other(t, frame)

    async def _stream_event(self, frame: dict[str, Any]) -> None:
        text = text_of(frame)
        if text is not None:
            await self._texts(text[0], [text[1]])
            return
        if self.profile.steers:
            ev = frame.get("event")
            if type(ev) is dict and ev.get("type") == "message_start":
                self.model_response_started()
        await self._emit_all(self.tr.stream_event(frame))
        if self.tr.open_tools and not self._in_tool_phase:
            self._tool_phase()

    async def _user(self, frame: dict[str, Any]) -> None:
        if frame.get("isReplay"):
            self._echo(frame)
            return
        await self._emit_all(self.tr.user(frame))
        await self._after_user(frame)
        if not self.tr.open_tools and self._in_tool_phase:
            self._in_tool_phase = False
            self._rewatch()

    async def _system(self, frame: dict[str, Any]) -> None:
        init = frame.get("subtype") == "init"
        if init and not self.turn_active:
            self.turn_active = True
            self.steer_refused = False
            self.session_id = str(frame.get("session_id") or self.session_id)
            self.source_meta = source_meta(self.session_id)
            self._rewatch()
        await self._emit_all(self.tr.system(frame))
        if init:
            self._check_required_mcp(frame)

    async def _bad_frame(self, frame: dict[str, Any], exc: Exception) -> None:
        import json

        self.protocol_errors += 1
        try:
            text = json.dumps(frame, default=str)[:4096]
        except (RecursionError, ValueError):  # nested too deeply to write out again
            text = f"a frame nested too deeply to show (keys {sorted(frame)[:20]})"
        kind = frame.get("type")
        shown = kind[:40] if isinstance(kind, str) else type(kind).__name__
        self.ctx.transcript(TranscriptItem(kind="protocol_error", text=text, is_error=True))
        await self.ctx.emit(
            Notice(
                kind=NoticeKind.LIFECYCLE.value,
                text=f"{self.profile.label} wrote a {shown!r} frame this driver cannot read "
                f"({type(exc).__name__}: {str(exc)[:200]}); it was skipped",
                metadata={"code": f"{self.profile.name}.protocol_error"},
            )
        )

    async def _not_json(self, line: bytes) -> None:
        self.protocol_errors += 1
        text = line[:4096].decode("utf-8", "replace")
        self.ctx.transcript(TranscriptItem(kind="protocol_error", text=text, is_error=True))
        await self.ctx.emit(ProcessInfo(kind=ProcessKind.STDOUT, text=text, bytes=line[:4096], data={"json": False}))
        await self.ctx.emit(
            Notice(
                kind=NoticeKind.LIFECYCLE.value,
                text=f"{self.profile.label} wrote a stdout line that is not JSON ({len(line)} bytes); it was skipped",
                metadata={"code": f"{self.profile.name}.protocol_error"},
            )
        )

    # -- hooks a driver's own run may override (more in ControlRequests and TurnEnds) ---------------------

    async def _after_user(self, frame: dict[str, Any]) -> None:
        """A ``user`` line's events were emitted (CodeBuddy ends a turn the CLI leaves without a result here)."""

    async def _other(self, t: Any, frame: dict[str, Any]) -> None:
        """A line of a type the family does not know."""
        await self._emit_all(self.tr.unknown(frame))

    # -- input -------------------------------------------------------------------------------------------

    def _write_user(
        self,
        text: str,
        claimed: list[ClaimedMessage],
        boundary: Boundary,
        mechanism: str,
        also: list[ClaimedMessage] | None = None,
        images: tuple[ImageInput, ...] = (),
    ) -> str:
        """Write one user line; ``also`` are messages joined to it at turn end (delivered as TURN_END/stdin);
        ``images`` go before the text as base64 image blocks."""
        uid = str(uuid.uuid4())
        self.pending[uid] = Pending(claimed, boundary, mechanism)
        if also:
            self.pending[uid + "+"] = Pending(also, Boundary.TURN_END, "stdin")
        self.proc.busy = True
        self.ctx.set_turn_id(str(self.ctx.turns + 1))
        self.proc.send(
            {
                "type": "user",
                "uuid": uid,
                "session_id": "",
                "parent_tool_use_id": None,
                "message": {"role": "user", "content": user_content(text, images)},
            }
        )
        if not self.echo_supported:
            self._delivered(self.pending.pop(uid))
            extra = self.pending.pop(uid + "+", None)
            if extra is not None:
                self._delivered(extra)
        return uid

    def _delivered(self, p: Pending) -> None:
        msgs = self.ctx.messages
        if msgs is None:
            return
        for m in p.claimed:
            with contextlib.suppress(RuntimeError):
                msgs.delivered(m, boundary=p.boundary, mechanism=p.mechanism)

    def _echo(self, frame: dict[str, Any]) -> None:
        p = self.pending.pop(str(frame.get("uuid") or ""), None)
        if p is not None:
            self._delivered(p)

    # -- supplemental messages ---------------------------------------------------------------------------

    def _rewatch(self) -> None:
        """Watch the queue for exactly what can be delivered now: nothing is claimed that must wait anyway."""
        msgs = self.ctx.messages
        if msgs is None:
            return
        boundaries = self.deliverable()
        if boundaries == self._watching and self._unwatch is not None:
            return
        self._stop_watching()
        self._watching = boundaries
        if boundaries:
            unwatch = msgs.watch(boundaries, self._messages_due)
            if self._watching is not None:  # not due at once
                self._unwatch = unwatch

    def _messages_due(self) -> None:
        """A message became deliverable at a watched boundary: the loop delivers it (a wake-up, no task)."""
        self._unwatch = None
        self._watching = None
        self.proc.inbox.put_nowait((WAKE, self, "messages"))

    def _stop_watching(self) -> None:
        unwatch, self._unwatch = self._unwatch, None
        if unwatch is not None:
            unwatch()

    def _tool_phase(self) -> None:
        """A tool is about to run: input written now joins the same turn (the CLI merges it after the tool)."""
        self._in_tool_phase = True
        if self.ctx.messages is not None and not self.profile.steers:
            self._deliver_now()

    def _deliver_now(self) -> None:
        msgs = self.ctx.messages
        if msgs is None:
            return
        if self.turn_active and not self.interrupting and msgs.pending(Boundary.INTERRUPT):
            claimed = msgs.claim(Boundary.INTERRUPT)
            if claimed:
                self.interrupt_claims.extend(claimed)
                self.interrupting = True
                self.proc.interrupt_soon()
        if self.profile.steers:
            if self.steerable() and msgs.pending(Boundary.IN_RUN):
                claimed = msgs.claim(Boundary.IN_RUN)
                if claimed:
                    self.steer(claimed)
        elif self.turn_active and self.tr.open_tools and msgs.pending(Boundary.IN_RUN):
            claimed = msgs.claim(Boundary.IN_RUN)
            if claimed:
                self._write_user("\n\n".join(m.text for m in claimed), claimed, Boundary.IN_RUN, "stdin")
        self._rewatch()

    async def _wake(self, payload: Any) -> None:
        if payload == "messages":
            self._deliver_now()
        elif payload == "startup_timeout":
            if not self.saw_output:
                raise self._silent(self.startup_timeout, "startup_timeout")
        elif isinstance(payload, tuple) and payload[0] == "steered":
            await self.steer_answered(payload[1])
        elif isinstance(payload, tuple) and payload[0] == "raise":
            raise payload[1]

    # -- the end of the CLI's turn is in TurnEnds ---------------------------------------------------------

    def _check_required_mcp(self, frame: dict[str, Any]) -> None:
        """A required MCP server that did not connect fails the run (its tools would be missing)."""
        failed = required_mcp_failures(frame, self.inv.mcp)
        if failed:
            raise DriverFailure(
                f"required MCP server(s) did not connect: {', '.join(failed)}",
                details={"mcp_servers": failed, "stderr_tail": self.proc.stderr_tail()},
                session_id=self.session_id,
            )


def spawn_event(proc: ClaudeFamilyProcess, resumed: str, fork: bool) -> Event:
    """The ProcessInfo event for a new CLI process (argv only: prompts and secrets never go there)."""
    return ProcessInfo(
        kind=ProcessKind.SPAWN,
        text=f"{proc.profile.name} pid {proc.pid}",
        metadata={"pid": str(proc.pid), "resume": resumed, "fork": str(fork).lower()},
        data={"pid": proc.pid, "argv": list(proc.argv), "started": time.time()},
    )
