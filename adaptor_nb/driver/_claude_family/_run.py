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
from typing import Any, NoReturn, TypeVar

from ..._enums import Boundary, FailureReason, MessageFailure, NoticeKind, ProcessKind
from ..._errors import AdaptorError, ResumeRejectedError
from ..._events import Event, EventMeta, EventSourceMeta, Notice, ProcessInfo
from ..._result import TranscriptItem
from .._claude_stream import ClaudeLikeResult, ClaudeLikeTranslator, parse_claude_like_result
from .._emit import TextDeltas
from .._hosted import mark_host_tool
from .._mcp_config import required_mcp_failures
from .._spi import ClaimedMessage, DriverFailure, DriverOutcome, Invocation, RunContext
from ._approvals import (
    allow_response,
    approval_spec,
    cancelled_reply,
    decision_response,
    error_response,
    mcp_response,
)
from ._decode import EOF, LINES, STDERR, WAKE, text_of
from ._process import ClaudeFamilyProcess
from ._steer import Pending, Steering

E = TypeVar("E", bound=Event)
_set = object.__setattr__
_RETRYABLE = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
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


class Finished(Exception):
    """Internal: the run reached its end (the loop unwinds with this)."""


class ClaudeFamilyRun(Steering):
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
        self.prompt_uuid = self._write_user(self.inv.prompt, [], Boundary.IN_RUN, "prompt")
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
        text = json.dumps(frame, default=str)[:4096]
        self.ctx.transcript(TranscriptItem(kind="protocol_error", text=text, is_error=True))
        await self.ctx.emit(
            Notice(
                kind=NoticeKind.LIFECYCLE.value,
                text=f"{self.profile.label} wrote a {str(frame.get('type'))[:40]!r} frame this driver cannot read "
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

    def end(self, outcome: DriverOutcome | None = None, failure: BaseException | None = None) -> NoReturn:
        """End the run now with ``outcome`` or ``failure`` (for a driver's own ends of a turn)."""
        if failure is not None:
            self._failure = failure
        else:
            self._outcome = outcome
        raise Finished

    # -- hooks a driver's own ClaudeFamilyRun may override -----------------------------------------------------------

    async def _after_user(self, frame: dict[str, Any]) -> None:
        """A ``user`` line's events were emitted (CodeBuddy ends a turn the CLI leaves without a result here)."""

    async def _other(self, t: Any, frame: dict[str, Any]) -> None:
        """A line of a type the family does not know."""
        await self._emit_all(self.tr.unknown(frame))

    def _plan_for(self, frame: dict[str, Any]) -> tuple[str, str]:
        """The text and path of a plan file to show with an ExitPlanMode request, when the tool carries none."""
        return "", ""

    def _stops_later(self, frame: dict[str, Any], exc: Exception) -> bool:
        """Whether the policy's refusal of ``frame`` ends the run later (the CLI ends its turn by itself)."""
        return False

    def _decided(self, frame: dict[str, Any], action: str) -> None:
        """A decision on ``frame`` was sent to the CLI."""

    def _turn_ended(self, res: ClaudeLikeResult) -> ClaudeLikeResult:
        """A ``result`` line was read (after cost bookkeeping): the result the run goes on with."""
        return res

    def _structured(self, res: ClaudeLikeResult) -> tuple[bool, Any]:
        """The structured answer of a successful last turn."""
        return res.has_structured, res.structured

    def _finish_metadata(self, metadata: dict[str, str]) -> None:
        """Add the driver's own keys to the outcome's metadata."""

    # -- input -------------------------------------------------------------------------------------------

    def _write_user(
        self,
        text: str,
        claimed: list[ClaimedMessage],
        boundary: Boundary,
        mechanism: str,
        also: list[ClaimedMessage] | None = None,
    ) -> str:
        """Write one user line; ``also`` are messages joined to it at turn end (delivered as TURN_END/stdin)."""
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
                "message": {"role": "user", "content": text},
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

    # -- control requests: approvals and the host-tool channel --------------------------------------------

    def _control_request(self, frame: dict[str, Any]) -> None:
        rid = str(frame.get("request_id") or "")
        request = frame.get("request")
        subtype = request.get("subtype") if isinstance(request, dict) else None
        if subtype == "mcp_message" and isinstance(request, dict) and self._serves(request):
            work = asyncio.get_running_loop().create_task(self._mcp_message(request, rid))
            self.mcp_tasks[rid] = work  # one task per message: parallel calls overlap, the reader never waits
            return
        if subtype != "can_use_tool":
            self.proc.send(error_response(rid, f"adaptor_nb does not serve control requests of type {subtype!r}"))
            return
        if self.profile.asks_for_allowed_tools and self._needs_no_approval(request):
            self.proc.send(allow_response(frame, self.profile))  # a host tool that needs no approval
            return
        task = asyncio.get_running_loop().create_task(self._approve(frame, rid))
        self.approval_tasks[rid] = task

    def _needs_no_approval(self, request: Any) -> bool:
        hosted = self.inv.tools
        if hosted is None or not isinstance(request, dict):
            return False
        own = hosted.own_name(str(request.get("tool_name") or ""))
        return own is not None and own not in hosted.approval

    async def _approve(self, frame: dict[str, Any], rid: str) -> None:
        try:
            decision = await self.ctx.approvals.request(approval_spec(frame, self.profile, *self._plan_for(frame)))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the policy ended the run: stop the CLI's turn and surface the error
            if rid not in self.withdrawn:
                self.proc.send(error_response(rid, "the run was stopped by its approval policy"))
                if self._stops_later(frame, exc):
                    return
                self.proc.interrupt_soon()
            self.proc.inbox.put_nowait((WAKE, self, ("raise", exc)))
            return
        finally:
            self.approval_tasks.pop(rid, None)
        if rid in self.withdrawn or decision.by == "withdrawn":
            return
        self.proc.send(decision_response(frame, decision, self.profile))
        self._decided(frame, decision.action)
        if decision.action == "deny" and decision.interrupt:
            self.user_interrupted = decision.reason or "denied with interrupt"

    def _serves(self, request: dict[str, Any]) -> bool:
        hosted = self.inv.tools
        return hosted is not None and hosted.serve is not None and request.get("server_name") == hosted.server

    async def _mcp_message(self, request: dict[str, Any], rid: str) -> None:
        """Answer one of the host tools' MCP messages (the CLI carries them for the SDK server it was given)."""
        hosted = self.inv.tools
        assert hosted is not None and hosted.serve is not None
        raw = request.get("message")
        message: dict[str, Any] = raw if isinstance(raw, dict) else {}
        try:
            reply = await hosted.serve(message)
        except asyncio.CancelledError:
            # The run is over: answer the call anyway, so the interrupted CLI can finish its turn and stay parked.
            if message.get("id") is not None:
                self.proc.send(mcp_response(rid, cancelled_reply(message["id"])))
            raise
        except Exception as exc:  # the protocol layer failed: the CLI sees an error, the run goes on
            self.proc.send(error_response(rid, f"host tools failed: {type(exc).__name__}"))
            return
        finally:
            self.mcp_tasks.pop(rid, None)
        self.proc.send(mcp_response(rid, reply if reply is not None else {"jsonrpc": "2.0", "result": {}}))

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

    # -- turn ends ---------------------------------------------------------------------------------------

    def _check_required_mcp(self, frame: dict[str, Any]) -> None:
        """A required MCP server that did not connect fails the run (its tools would be missing)."""
        failed = required_mcp_failures(frame, self.inv.mcp)
        if failed:
            raise DriverFailure(
                f"required MCP server(s) did not connect: {', '.join(failed)}",
                details={"mcp_servers": failed, "stderr_tail": self.proc.stderr_tail()},
                session_id=self.session_id,
            )

    async def _result(self, frame: dict[str, Any]) -> None:
        await self.settle_steers()
        res = parse_claude_like_result(frame, self.proc.cost_total)
        if res.cost_total is not None:
            self.proc.cost_total = res.cost_total
        if res.cost_usd is not None:
            self.cost += res.cost_usd
        res = self._turn_ended(res)
        self._record_result(frame, res)
        self._check_resumed(res)
        if self.prompt_uuid in self.pending and self.echo_supported:
            # This CLI never echoes input (--replay-user-messages unsupported): count writes as delivered.
            self.echo_supported = False
            for uid in list(self.pending):
                self._delivered(self.pending.pop(uid))
        self.turn_active = False
        self._in_tool_phase = False
        self.tr.open_tools.clear()
        self._rewatch()
        self.last = res
        more = await self.ctx.turn_end(usage=res.usage, text=res.text if res.ok else None)
        self.proc.busy = bool(self.pending)
        if not res.ok:
            self._failed_turn(res, more)
        if self.pending:
            return  # input written during the turn became a turn of its own; its result is still to come
        if more and self._next_turn():
            return
        self._finish()

    def _record_result(self, frame: dict[str, Any], res: ClaudeLikeResult) -> None:
        self.ctx.terminal("result", frame)
        self.ctx.transcript(
            TranscriptItem(
                kind="result",
                text=res.text or "",
                is_error=not res.ok,
                session_id=res.session_id,
                usage=res.usage,
                cost_usd=res.cost_usd,
                subtype=res.subtype,
                errors=res.errors,
                model=self.tr.model,
                data={"api_error_status": res.api_error_status, "terminal_reason": res.terminal_reason},
            )
        )
        if res.session_id:
            self.session_id = res.session_id

    def _check_resumed(self, res: ClaudeLikeResult) -> None:
        """A first turn that failed because the session to resume is unknown raises ResumeRejectedError."""
        if not (self.resuming and self.tr.inits == 0 and not res.ok and self.ctx.turns == 0):
            return
        rejected = [e for e in res.errors if "No conversation found" in e or ("session" in e.lower() and "found" in e)]
        if rejected:
            self.proc.busy = False
            raise ResumeRejectedError(
                f"{self.profile.label} could not resume session "
                f"{self.inv.resume.session_id if self.inv.resume else ''!r}: " + "; ".join(rejected),
                key=self.inv.thread_key,
                details={"errors": list(res.errors), "stderr_tail": self.proc.stderr_tail()},
            )

    def _failed_turn(self, res: ClaudeLikeResult, more: bool) -> None:
        """A turn ended in error: an interrupted one may go on with the messages that interrupted it."""
        if self.interrupting and res.subtype == "error_during_execution":
            self.interrupting = False
            claimed, self.interrupt_claims = self.interrupt_claims, []
            if more:
                self._write_user("\n\n".join(m.text for m in claimed), claimed, Boundary.INTERRUPT, "interrupt")
                return
            self._fail_messages(claimed, MessageFailure.LIMIT_EXCEEDED)
            self._finish()
        self._failure = self._classify(res)
        if self.pending:
            # The CLI still holds input it will turn into another turn: the process is not reusable as is.
            self.proc.broken = True
        raise Finished

    def _next_turn(self) -> bool:
        """Write the messages due at this turn's end as the next user line; False when there are none."""
        msgs = self.ctx.messages
        if msgs is None:
            return False
        claimed = msgs.claim(Boundary.TURN_END) if msgs.pending(Boundary.TURN_END) else []
        interrupts: list[ClaimedMessage] = []
        if self.profile.interrupt_opens_turn:
            interrupts, self.interrupt_claims = self.interrupt_claims, []
            self.interrupting = False
        elif self.interrupt_claims:
            claimed = self.interrupt_claims + claimed
            self.interrupt_claims = []
            self.interrupting = False
        if msgs.pending(Boundary.INTERRUPT):
            claimed += msgs.claim(Boundary.INTERRUPT)
        if interrupts:
            # The interrupted turn ended with a result: its messages open the next turn, the others join them.
            text = "\n\n".join(m.text for m in interrupts + claimed)
            self._write_user(text, interrupts, Boundary.INTERRUPT, "interrupt", also=claimed)
            return True
        if claimed:
            self._write_user("\n\n".join(m.text for m in claimed), claimed, Boundary.TURN_END, "stdin")
            return True
        return False

    def _fail_messages(self, claimed: list[ClaimedMessage], reason: MessageFailure) -> None:
        msgs = self.ctx.messages
        if msgs is None:
            return
        for m in claimed:
            with contextlib.suppress(RuntimeError):
                msgs.failed(m, reason)

    def _finish(self) -> None:
        res = self.last
        self.proc.busy = bool(self.pending)
        if self.interrupt_claims:
            self._fail_messages(self.interrupt_claims, MessageFailure.LIMIT_EXCEEDED)
            self.interrupt_claims = []
        if res is not None and not res.ok and self.user_interrupted:
            self._failure = self._classify(res)
            raise Finished
        metadata = {"session_id": self.session_id, "cost_usd": f"{self.cost:.6f}"}
        self._finish_metadata(metadata)
        if res is not None:
            metadata["stop_reason"] = res.stop_reason
            metadata["terminal_reason"] = res.terminal_reason
        if self.tr.init_model:
            metadata["cli_model"] = self.tr.init_model
        self._outcome = self._outcome_of(res, metadata)
        raise Finished

    def _outcome_of(self, res: ClaudeLikeResult | None, metadata: dict[str, str]) -> DriverOutcome | None:
        outcome = DriverOutcome(
            text=res.text if res is not None and res.ok else None,
            model=self.tr.model or self.tr.init_model or self.inv.model,
            provider=self.profile.provider,
            metadata=metadata,
            session_id=self.session_id,
            healthy=res is not None and res.ok and self.protocol_errors == 0,
        )
        if res is None or not res.ok:
            return outcome
        has_structured, structured = self._structured(res)
        if has_structured:
            outcome.structured = structured
            outcome.has_structured = True
        elif self.inv.output_schema is not None:
            self._failure = DriverFailure(
                f"{self.profile.short} finished without calling the StructuredOutput tool, so there is no structured "
                "output; the answer text is kept in the result",
                reason=FailureReason.POLICY_VIOLATION,
                details={"text": res.text or "", "session_id": self.session_id},
                session_id=self.session_id,
            )
            return None
        return outcome

    def _classify(self, res: ClaudeLikeResult) -> DriverFailure:
        details: dict[str, Any] = {
            "subtype": res.subtype,
            "session_id": res.session_id,
            "stderr_tail": self.proc.stderr_tail(),
        }
        if res.errors:
            details["errors"] = list(res.errors)
        if res.errors_info:
            details["errors_info"] = [dict(e) for e in res.errors_info]
        if res.terminal_reason:
            details["terminal_reason"] = res.terminal_reason
        label = self.profile.label
        if self.user_interrupted:
            details["denial_reason"] = self.user_interrupted
            return DriverFailure(
                f"the run stopped because a tool was denied with interrupt: {self.user_interrupted}",
                reason=FailureReason.APPROVAL_DENIED,
                details=details,
                session_id=res.session_id,
            )
        if res.subtype == "error_max_turns":
            return DriverFailure(
                f"{label} reached its step limit (Config.max_turns_per_run): " + "; ".join(res.errors),
                reason=FailureReason.LIMIT_EXCEEDED,
                details=details,
                session_id=res.session_id,
            )
        if res.api_error_status is not None:
            details["api_error_status"] = res.api_error_status
            status = res.api_error_status
            return DriverFailure(
                res.text or f"the model API answered HTTP {status}",
                reason=FailureReason.AGENT_ERROR,
                details=details,
                session_id=res.session_id,
                retryable=status in _RETRYABLE,
            )
        message = res.text or "; ".join(res.errors) or f"{label} ended the turn with {res.subtype or 'an error'}"
        message = self.profile.explain(message)
        return DriverFailure(message, reason=FailureReason.AGENT_ERROR, details=details, session_id=res.session_id)

    async def _eof(self, rc: int) -> None:
        self.exit_code = rc
        self.proc.busy = False
        await self.ctx.emit(ProcessInfo(kind=ProcessKind.EXIT, data={"returncode": rc, "pid": self.proc.pid}))
        tail = self.proc.stderr_tail()
        label = self.profile.label
        if self.proc.overflow is not None:
            self._failure = self.proc.overflow.failure(
                label, exit_code=rc, stderr_tail=tail, session_id=self.session_id, pid=self.proc.pid
            )
            raise Finished
        self._failure = DriverFailure(
            f"{label} exited with code {rc} before the run finished"
            + (f": {tail.strip().splitlines()[-1]}" if tail.strip() else ""),
            reason=FailureReason.AGENT_ERROR,
            details={"exit_code": rc, "stderr_tail": tail, "session_id": self.session_id, "pid": self.proc.pid},
            session_id=self.session_id,
        )
        raise Finished


def spawn_event(proc: ClaudeFamilyProcess, resumed: str, fork: bool) -> Event:
    """The ProcessInfo event for a new CLI process (argv only: prompts and secrets never go there)."""
    return ProcessInfo(
        kind=ProcessKind.SPAWN,
        text=f"{proc.profile.name} pid {proc.pid}",
        metadata={"pid": str(proc.pid), "resume": resumed, "fork": str(fork).lower()},
        data={"pid": proc.pid, "argv": list(proc.argv), "started": time.time()},
    )
