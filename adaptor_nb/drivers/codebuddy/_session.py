"""One run over a CodeBuddyProcess: prompt in, frames out, approvals, supplemental messages and the turn loop."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ...driver import (
    Boundary,
    ClaimedMessage,
    DriverFailure,
    DriverOutcome,
    Event,
    EventMeta,
    EventSourceMeta,
    FailureReason,
    Invocation,
    MessageFailure,
    Notice,
    NoticeKind,
    Phase,
    ProcessInfo,
    ProcessKind,
    ResumeRejectedError,
    Role,
    RunContext,
    TextDelta,
    TranscriptItem,
    mark_host_tool,
    text_delta,
)
from ._approvals import PLAN_TOOL, allow_response, approval_spec, decision_response, error_response
from ._host_errors import host_error
from ._mcp import required_failures
from ._process import EOF, LINES, STDERR, WAKE, CodeBuddyProcess
from ._structured import StructuredCalls, rescue, settle
from ._translate import FrameTranslator, TurnResult, parse_result

PROVIDER = "codebuddy"
E = TypeVar("E", bound=Event)
_new = object.__new__
_set = object.__setattr__
_ASSISTANT = Role.ASSISTANT
_CONTENT = Phase.CONTENT


def _source_meta(session_id: str) -> EventMeta | None:
    """The meta a driver attaches to a fresh event so the broker records its provider coordinates."""
    return EventMeta(source=EventSourceMeta(thread_id=session_id)) if session_id else None


_RETRYABLE = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


@dataclass
class _Pending:
    """A user line written to stdin and not yet echoed back."""

    claimed: list[ClaimedMessage] = field(default_factory=list)
    boundary: Boundary = Boundary.IN_RUN
    mechanism: str = "stdin"


@dataclass
class _Steer:
    """Messages sent into the running turn with a ``steer`` control request.

    They count as delivered once a model response starts after the CLI acknowledged them (the CLI adds steered
    text to the turn's next model request); a refusal, or a turn that ends first, sends them back to the queue.
    """

    claimed: list[ClaimedMessage]
    task: asyncio.Task[dict[str, Any]]
    acked_at: int | None = None  # the model responses started when the acknowledgement was read


class _Finished(Exception):
    """Internal: the run reached its end (the loop unwinds with this)."""


class CodeBuddyRun:
    """Drives one run to its end on ``proc``; ``execute()`` returns a DriverOutcome or raises DriverFailure."""

    def __init__(
        self,
        proc: CodeBuddyProcess,
        ctx: RunContext,
        inv: Invocation,
        *,
        resuming: bool,
        startup_timeout: float,
        idle_timeout: float | None,
    ) -> None:
        self.proc = proc
        self.ctx = ctx
        self.inv = inv
        self.resuming = resuming
        self.startup_timeout = startup_timeout
        self.idle_timeout = idle_timeout
        self.tr = FrameTranslator(ctx.transcript)
        self.pending: dict[str, _Pending] = {}
        self.prompt_uuid = ""
        self.echo_supported = False  # no --replay-user-messages: a written line counts as delivered
        self.plan_path = ""
        self.structured_calls = StructuredCalls()
        self.structured_rescued = False  # the CLI gave up on a valid StructuredOutput call (see _structured)
        self.interrupt_claims: list[ClaimedMessage] = []
        self.interrupting = False
        self.steers: list[_Steer] = []
        self.steer_refused = False  # the CLI said the turn is finishing ("idle"): SOON waits for its end
        self.model_responses = 0  # model responses started in this run (message_start or a new assistant message)
        self._last_message_id = ""
        self._saw_message_start = False
        self.user_interrupted = ""
        self.plan_denied = ""  # the tool_use_id of an ExitPlanMode that was denied: the CLI writes no result after it
        self.plan_abort: Exception | None = None  # the policy's abort for that denial, raised once the turn ended
        self.approval_tasks: dict[str, asyncio.Task[None]] = {}
        self.withdrawn: set[str] = set()
        self.last: TurnResult | None = None
        self.session_id = proc.session_id or ""
        # One meta per provider session, shared by every event of it: the broker keeps its source when it stamps.
        self.source_meta: EventMeta | None = _source_meta(self.session_id)
        self.protocol_errors = 0
        self.saw_output = False
        self.turn_active = False
        self.cost = 0.0
        self.steps = 0  # this run's share of the CLI's cumulative num_turns
        self.exit_code: int | None = None
        self._in_tool_phase = False
        self._watcher: asyncio.Task[None] | None = None
        self._watching: frozenset[Boundary] = frozenset()
        self._outcome: DriverOutcome | None = None
        self._failure: DriverFailure | None = None

    # -- entry -------------------------------------------------------------------------------------------

    async def execute(self) -> DriverOutcome:
        """Write the prompt and follow the CLI until the run's last turn ended."""
        self.prompt_uuid = self._write_user(self.inv.prompt, [], Boundary.IN_RUN, "prompt")
        try:
            await self._loop()
        except _Finished:
            pass
        if self._failure is not None:
            raise self._failure
        assert self._outcome is not None
        return self._outcome

    async def close(self) -> None:
        """Stop helper tasks (message watcher, approvals still waiting)."""
        steering = [s.task for s in self.steers]
        tasks = [t for t in (self._watcher, *self.approval_tasks.values(), *steering) if t is not None and not t.done()]
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
        leftovers += [m for st in self.steers for m in st.claimed]
        self.pending.clear()
        self.interrupt_claims = []
        self.steers = []
        for m in leftovers:
            with contextlib.suppress(RuntimeError):
                msgs.failed(m, reason)

    # -- the loop ----------------------------------------------------------------------------------------

    async def _next(self) -> tuple[Any, ...]:
        inbox = self.proc.inbox
        if not inbox.empty():
            return inbox.get_nowait()
        timeout: float | None = None
        what = ""
        if not self.saw_output:
            timeout, what = self.startup_timeout, "startup_timeout"
        elif self.idle_timeout is not None and not self.approval_tasks:
            timeout, what = self.idle_timeout, "idle_timeout"
        if timeout is None:
            return await inbox.get()
        try:
            return await asyncio.wait_for(inbox.get(), timeout)
        except TimeoutError:
            raise DriverFailure(
                f"CodeBuddy Code wrote nothing for {timeout:g} s ({what}); "
                "the process is stuck or waiting on the network",
                details={"stderr_tail": self.proc.stderr_tail(), "timeout": what, "pid": self.proc.pid},
                session_id=self.session_id,
            ) from None

    def _sourced(self, ev: E) -> E:
        """``ev`` (a fresh payload) carrying the provider session as its source meta (host tools by their name)."""
        ev = host_error(mark_host_tool(ev, self.inv.tools), self.inv.tools)
        meta = self.source_meta
        if meta is not None and ev.meta.source is None:
            _set(ev, "meta", meta)
        return ev

    async def _loop(self) -> None:
        ctx = self.ctx
        emit = ctx.emit
        emit_text = ctx.emit_text_nowait
        emit_nowait = ctx.emit_nowait
        meta = self.source_meta
        tr = self.tr
        blocks = tr.blocks
        while True:
            item = await self._next()
            kind = item[0]
            if kind == LINES:
                if item[1]:
                    ctx.raw_stdout(self.proc.redact(item[1]))
                for frame in item[2]:
                    ft = type(frame)
                    if ft is tuple:
                        # The hot path: a top-level text delta, already reduced to (block index, text) by the reader.
                        self.saw_output = True
                        blk = blocks.get(frame[0])
                        if blk is not None:
                            text: str = frame[1]
                            blk.parts.append(text)
                            if meta is None:
                                if not emit_text(text, tr.msg_id):
                                    await emit(text_delta(text, tr.msg_id))
                            else:
                                td = _new(TextDelta)
                                _set(
                                    td,
                                    "__dict__",
                                    {
                                        "meta": meta,
                                        "text": text,
                                        "message_id": tr.msg_id,
                                        "role": _ASSISTANT,
                                        "phase": _CONTENT,
                                    },
                                )
                                if not emit_nowait(td):
                                    await emit(td)
                        continue
                    if ft is not dict:
                        await self._not_json(frame)
                        continue
                    t = frame.get("type")
                    self.saw_output = True
                    if t == "stream_event":
                        # A text delta in another layout than the reader's short cut knows: still no full dispatch.
                        ev = frame.get("event")
                        if type(ev) is dict and ev.get("type") == "content_block_delta":
                            delta = ev.get("delta")
                            if type(delta) is dict and delta.get("type") == "text_delta":
                                index = ev.get("index", -1)
                                blk = blocks.get(index) if type(index) is int else None
                                text = delta.get("text", "")
                                if blk is not None and type(text) is str and not frame.get("parent_tool_use_id"):
                                    blk.parts.append(text)
                                    td = self._sourced(text_delta(text, tr.msg_id))
                                    if not emit_nowait(td):
                                        await emit(td)
                                    continue
                        if type(ev) is dict and ev.get("type") == "message_start":
                            self._model_response_started()
                        for ev in tr.stream_event(frame):
                            await emit(self._sourced(ev))
                        if tr.open_tools and not self._in_tool_phase:
                            self._tool_phase()
                    elif t == "assistant":
                        self._note_assistant(frame)
                        self._note_plan_file(frame)
                        self.structured_calls.note(frame)
                        for ev in tr.assistant(frame):
                            await emit(self._sourced(ev))
                        if tr.open_tools and not self._in_tool_phase:
                            self._tool_phase()
                    elif t == "user":
                        if frame.get("isReplay"):
                            self._echo(frame)
                            continue
                        for ev in tr.user(frame):
                            await emit(self._sourced(ev))
                        why = self._ended_without_result(frame)
                        if why:
                            await self._end_without_result(why)
                        if not tr.open_tools and self._in_tool_phase:
                            self._in_tool_phase = False
                            self._rewatch()
                    elif t == "system":
                        if frame.get("subtype") == "init" and not self.turn_active:
                            self.turn_active = True
                            self.steer_refused = False
                            self.session_id = str(frame.get("session_id") or self.session_id)
                            self.source_meta = meta = _source_meta(self.session_id)
                            self._rewatch()
                        for ev in tr.system(frame):
                            await emit(self._sourced(ev))
                        if frame.get("subtype") == "init":
                            self._check_required_mcp(frame)
                    elif t == "result":
                        await self._result(frame)
                    elif t == "control_request":
                        self._control_request(frame)
                    elif t == "control_cancel_request":
                        rid = str(frame.get("request_id") or "")
                        self.withdrawn.add(rid)
                        ctx.approvals.withdraw(rid)
                    elif t == "control_response":
                        continue  # the CLI echoes our own replies; answers to our requests never get here
                    elif t == "error":
                        self._error_line(frame)
                        for ev in tr.unknown(frame):
                            await emit(self._sourced(ev))
                    else:
                        for ev in tr.unknown(frame):
                            await emit(self._sourced(ev))
            elif kind == STDERR:
                chunk: bytes = item[1]
                ctx.raw_stderr(chunk)
                await emit(ProcessInfo(kind=ProcessKind.STDERR, text=chunk.decode("utf-8", "replace"), bytes=chunk))
            elif kind == EOF:
                await self._eof(item[1])
            elif kind == WAKE and item[1] is self:
                await self._wake(item[2])

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
        self.pending[uid] = _Pending(claimed, boundary, mechanism)
        if also:
            self.pending[uid + "+"] = _Pending(also, Boundary.TURN_END, "stdin")
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

    def _delivered(self, p: _Pending) -> None:
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

    async def _not_json(self, line: bytes) -> None:
        self.protocol_errors += 1
        text = line[:4096].decode("utf-8", "replace")
        self.ctx.transcript(TranscriptItem(kind="protocol_error", text=text, is_error=True))
        await self.ctx.emit(ProcessInfo(kind=ProcessKind.STDOUT, text=text, bytes=line[:4096], data={"json": False}))
        await self.ctx.emit(
            Notice(
                kind=NoticeKind.LIFECYCLE.value,
                text=f"CodeBuddy Code wrote a stdout line that is not JSON ({len(line)} bytes); it was skipped",
                metadata={"code": "codebuddy.protocol_error"},
            )
        )

    # -- approvals ---------------------------------------------------------------------------------------

    def _control_request(self, frame: dict[str, Any]) -> None:
        rid = str(frame.get("request_id") or "")
        request = frame.get("request")
        subtype = request.get("subtype") if isinstance(request, dict) else None
        if subtype != "can_use_tool":
            self.proc.send(error_response(rid, f"adaptor_nb does not serve control requests of type {subtype!r}"))
            return
        hosted = self.inv.tools
        own = hosted.own_name(_tool_name(frame)) if hosted is not None else None
        if hosted is not None and own is not None and own not in hosted.approval:
            self.proc.send(allow_response(frame))  # a host tool that needs no approval is allowed at once
            return
        task = asyncio.get_running_loop().create_task(self._approve(frame, rid))
        self.approval_tasks[rid] = task

    async def _approve(self, frame: dict[str, Any], rid: str) -> None:
        try:
            decision = await self.ctx.approvals.request(approval_spec(frame, *self._plan_for(frame)))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the policy ended the run: stop the CLI's turn and surface the error
            if rid not in self.withdrawn:
                self.proc.send(error_response(rid, "the run was stopped by its approval policy"))
                if _tool_name(frame) == PLAN_TOOL:
                    # A refused plan ends the CLI's turn with no result once its tool result is written: the
                    # run ends there, after the text streamed before it, so the partial result keeps that text.
                    self.plan_denied = _tool_use_id(frame)
                    self.plan_abort = exc
                    return
                self.proc.interrupt_soon()
            self.proc.inbox.put_nowait((WAKE, self, ("raise", exc)))
            return
        finally:
            self.approval_tasks.pop(rid, None)
        if rid in self.withdrawn or decision.by == "withdrawn":
            return
        self.proc.send(decision_response(frame, decision))
        if decision.action == "deny" and _tool_name(frame) == PLAN_TOOL:
            self.plan_denied = _tool_use_id(frame)
        if decision.action == "deny" and decision.interrupt:
            self.user_interrupted = decision.reason or "denied with interrupt"

    def _note_plan_file(self, frame: dict[str, Any]) -> None:
        """Remember the plan file a Write under ``.codebuddy/plans/`` created (ExitPlanMode carries no plan)."""
        message = frame.get("message")
        for block in (message.get("content") if isinstance(message, dict) else None) or ():
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "Write":
                path = (block.get("input") or {}).get("file_path")
                if isinstance(path, str) and "/.codebuddy/plans/" in path:
                    self.plan_path = path

    def _plan_for(self, frame: dict[str, Any]) -> tuple[str, str]:
        request = frame.get("request")
        if not isinstance(request, dict) or request.get("tool_name") != PLAN_TOOL or not self.plan_path:
            return "", ""
        try:
            with open(self.plan_path, encoding="utf-8", errors="replace") as fh:
                return fh.read(1 << 20), self.plan_path
        except OSError:
            return "", self.plan_path

    def _error_line(self, frame: dict[str, Any]) -> None:
        """A top-level ``error`` line: an unknown resume id or a cancelled start end the turn without a result."""
        text = str(frame.get("error") or frame.get("message") or "")
        if "No conversation found" in text and self.resuming and self.ctx.turns == 0:
            self.proc.busy = False
            self.proc.broken = True
            raise ResumeRejectedError(
                f"CodeBuddy Code could not resume session "
                f"{self.inv.resume.session_id if self.inv.resume else ''!r}: {text}",
                key=self.inv.thread_key,
                details={"errors": [text], "stderr_tail": self.proc.stderr_tail()},
            )
        if "No conversation found" in text or "startup was cancelled" in text:
            self.proc.busy = False
            self.proc.broken = True
            raise DriverFailure(
                f"CodeBuddy Code ended the turn without a result: {text}",
                reason=FailureReason.AGENT_ERROR,
                details={"errors": [text], "stderr_tail": self.proc.stderr_tail(), "session_id": self.session_id},
                session_id=self.session_id,
            )

    # -- supplemental messages ---------------------------------------------------------------------------

    def _rewatch(self) -> None:
        """Watch the queue for exactly what can be delivered now: nothing is claimed that must wait anyway.

        While a turn runs, SOON messages go in through ``steer`` (a user line written mid-turn would start a
        parallel session) and INTERRUPT messages through the ``interrupt`` control request; between turns they
        wait for the turn's end, where ``_result`` writes them as the next user line.
        """
        if self.ctx.messages is None:
            return
        boundaries: frozenset[Boundary] = frozenset()
        if self.turn_active and self.session_id:
            boundaries = frozenset({Boundary.IN_RUN, Boundary.INTERRUPT})
            if self.interrupting:
                boundaries -= {Boundary.INTERRUPT}
            if self.steer_refused or self.interrupting:
                boundaries -= {Boundary.IN_RUN}
        watcher = self._watcher
        if boundaries == self._watching and watcher is not None and not watcher.done():
            return
        if watcher is not None and not watcher.done():
            watcher.cancel()
        self._watching = boundaries
        self._watcher = asyncio.get_running_loop().create_task(self._watch(boundaries)) if boundaries else None

    async def _watch(self, boundaries: frozenset[Boundary]) -> None:
        msgs = self.ctx.messages
        assert msgs is not None
        await msgs.wait(boundaries)
        self.proc.inbox.put_nowait((WAKE, self, "messages"))

    def _tool_phase(self) -> None:
        """A tool is about to run (kept for the plan and interrupt bookkeeping; delivery does not depend on it)."""
        self._in_tool_phase = True

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
        steerable = self.turn_active and self.session_id and not (self.interrupting or self.steer_refused)
        if steerable and msgs.pending(Boundary.IN_RUN):
            claimed = msgs.claim(Boundary.IN_RUN)
            if claimed:
                self._steer(claimed)
        self._rewatch()

    def _steer(self, claimed: list[ClaimedMessage]) -> None:
        """Send ``claimed`` into the running turn; the acknowledgement comes back through the inbox, in order."""
        request = {
            "subtype": "steer",
            "session_id": self.session_id,
            "content_blocks": [{"type": "text", "text": "\n\n".join(m.text for m in claimed)}],
        }
        task = asyncio.get_running_loop().create_task(self.proc.control(request))
        steer = _Steer(claimed, task)
        self.steers.append(steer)

        def acked(_: asyncio.Task[dict[str, Any]]) -> None:
            self.proc.inbox.put_nowait((WAKE, self, ("steered", steer)))

        task.add_done_callback(acked)

    async def _steer_answered(self, steer: _Steer) -> None:
        """The CLI answered a steer: a refusal sends the messages back to the queue (turn end takes them)."""
        if steer not in self.steers:
            return
        task = steer.task
        ok = not task.cancelled() and task.exception() is None and task.result().get("steered") is True
        if ok:
            steer.acked_at = self.model_responses
            await self.ctx.emit(
                Notice(
                    kind=NoticeKind.LIFECYCLE.value,
                    text=f"CodeBuddy Code took {len(steer.claimed)} message(s) into the running turn (steer)",
                    metadata={"code": "codebuddy.steered", "message_ids": ",".join(m.id for m in steer.claimed)},
                )
            )
            return
        self.steers.remove(steer)
        self.steer_refused = True  # no second try in this turn: the CLI would refuse again until the result
        self._requeue(steer.claimed)
        self._rewatch()

    def _requeue(self, claimed: list[ClaimedMessage]) -> None:
        msgs = self.ctx.messages
        if msgs is None:
            return
        for m in claimed:
            with contextlib.suppress(RuntimeError):
                msgs.requeue(m)

    def _model_response_started(self, from_assistant: bool = False) -> None:
        """A model request of this turn began: steered messages acknowledged before it are in it."""
        self.model_responses += 1
        self._saw_message_start = self._saw_message_start or not from_assistant
        for steer in [s for s in self.steers if s.acked_at is not None and s.acked_at < self.model_responses]:
            self.steers.remove(steer)
            self._delivered(_Pending(steer.claimed, Boundary.IN_RUN, "steer"))

    def _note_assistant(self, frame: dict[str, Any]) -> None:
        """Without partial messages an assistant line with a new message id is the sign of a new model response."""
        if self._saw_message_start:
            return
        message = frame.get("message")
        mid = str(message.get("id") or "") if isinstance(message, dict) else ""
        if mid and mid != self._last_message_id:
            self._last_message_id = mid
            self._model_response_started(from_assistant=True)

    async def _settle_steers(self) -> None:
        """At a turn's end: wait for unanswered steers; those that reached no model request go back to the queue."""
        for steer in list(self.steers):
            if not steer.task.done():
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(asyncio.shield(steer.task), 5.0)
        leftover, self.steers = self.steers, []
        for steer in leftover:
            if not steer.task.done():
                steer.task.cancel()
            self._requeue(steer.claimed)

    async def _wake(self, payload: Any) -> None:
        if payload == "messages":
            self._deliver_now()
        elif isinstance(payload, tuple) and payload[0] == "steered":
            await self._steer_answered(payload[1])
        elif isinstance(payload, tuple) and payload[0] == "raise":
            raise payload[1]

    # -- turn ends ---------------------------------------------------------------------------------------

    def _ended_without_result(self, frame: dict[str, Any]) -> str:
        """Why this ``user`` line is the last of a turn that gets no ``result`` line ("" if it is not).

        Two paths end that way: the tool result of a denied ExitPlanMode, and a tool killed by an interrupt
        (its result reads "Interrupted by user").
        """
        if not (self.plan_denied or self.interrupting):
            return ""
        message = frame.get("message")
        for block in (message.get("content") if isinstance(message, dict) else None) or ():
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            tool_id = str(block.get("tool_use_id") or "")
            if self.plan_denied and (tool_id == self.plan_denied or self.plan_denied == "?"):
                return "plan_denied"
            if self.interrupting and _plain_text(block.get("content")).strip() == "Interrupted by user":
                return "interrupted"
        return ""

    async def _end_without_result(self, why: str) -> None:
        """End the turn the CLI left open: a finished turn with the text streamed so far, never healthy.

        The CLI's next user line would start a new session without history, so the process is not reused and
        messages waiting for this turn cannot reach it.
        """
        await self._settle_steers()
        self.proc.busy = False
        self.proc.broken = True
        self.turn_active = False
        self._in_tool_phase = False
        self.tr.open_tools.clear()
        self.pending.clear()
        self.ctx.transcript(
            TranscriptItem(
                kind="result",
                text="",
                session_id=self.session_id,
                subtype=why,
                model=self.tr.model,
                data={"terminal_reason": why, "synthesized": True},
            )
        )
        await self.ctx.turn_end()
        if self.plan_abort is not None:
            raise self.plan_abort
        if self.interrupt_claims:
            self._fail_messages(self.interrupt_claims, MessageFailure.PROVIDER_REJECTED)
            self.interrupt_claims = []
        self.interrupting = False
        metadata = {
            "session_id": self.session_id,
            "cost_usd": f"{self.cost:.6f}",
            "terminal_reason": why,
        }
        if self.tr.init_model:
            metadata["cli_model"] = self.tr.init_model
        self._outcome = DriverOutcome(
            text=None,
            model=self.tr.model or self.tr.init_model or self.inv.model,
            provider=PROVIDER,
            metadata=metadata,
            session_id=self.session_id,
            healthy=False,
        )
        raise _Finished

    def _check_required_mcp(self, frame: dict[str, Any]) -> None:
        """A required MCP server that did not connect fails the run (its tools would be missing)."""
        failed = required_failures(frame, self.inv.mcp)
        if failed:
            raise DriverFailure(
                f"required MCP server(s) did not connect: {', '.join(failed)}",
                details={"mcp_servers": failed, "stderr_tail": self.proc.stderr_tail()},
                session_id=self.session_id,
            )

    async def _result(self, frame: dict[str, Any]) -> None:
        await self._settle_steers()
        res = parse_result(frame, self.proc.cost_total)
        if res.cost_total is not None:
            self.proc.cost_total = res.cost_total
        if res.cost_usd is not None:
            self.cost += res.cost_usd
        if res.num_turns >= self.proc.num_turns_total:
            self.steps += res.num_turns - self.proc.num_turns_total
            self.proc.num_turns_total = res.num_turns
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
        if self.resuming and self.tr.inits == 0 and not res.ok and self.ctx.turns == 0:
            rejected = [
                e for e in res.errors if "No conversation found" in e or ("session" in e.lower() and "found" in e)
            ]
            if rejected:
                self.proc.busy = False
                raise ResumeRejectedError(
                    f"CodeBuddy Code could not resume session "
                    f"{self.inv.resume.session_id if self.inv.resume else ''!r}: " + "; ".join(rejected),
                    key=self.inv.thread_key,
                    details={"errors": list(res.errors), "stderr_tail": self.proc.stderr_tail()},
                )
        if self.prompt_uuid in self.pending and self.echo_supported:
            # This CLI never echoes input (--replay-user-messages unsupported): count writes as delivered.
            self.echo_supported = False
            for uid in list(self.pending):
                self._delivered(self.pending.pop(uid))
        self.turn_active = False
        self._in_tool_phase = False
        self.tr.open_tools.clear()
        self._rewatch()
        if self.inv.output_schema is not None and not (self.user_interrupted or self.interrupting):
            rescued = rescue(self.inv.output_schema.schema, res, self.structured_calls)
            if rescued is not None:
                res, self.structured_rescued = rescued, True
        self.last = res
        more = await self.ctx.turn_end(usage=res.usage, text=res.text if res.ok else None)
        self.proc.busy = bool(self.pending)
        if not res.ok:
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
            raise _Finished
        if self.pending:
            return  # input written during the turn became a turn of its own; its result is still to come
        msgs = self.ctx.messages
        if more and msgs is not None:
            interrupts, self.interrupt_claims = self.interrupt_claims, []
            self.interrupting = False
            claimed = msgs.claim(Boundary.TURN_END) if msgs.pending(Boundary.TURN_END) else []
            if msgs.pending(Boundary.INTERRUPT):
                claimed += msgs.claim(Boundary.INTERRUPT)
            if interrupts:
                # The interrupted turn ended with a result: its messages open the next turn, the others join them.
                text = "\n\n".join(m.text for m in interrupts + claimed)
                self._write_user(text, interrupts, Boundary.INTERRUPT, "interrupt", also=claimed)
                return
            if claimed:
                self._write_user("\n\n".join(m.text for m in claimed), claimed, Boundary.TURN_END, "stdin")
                return
        self._finish()

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
            raise _Finished
        metadata = {"session_id": self.session_id, "cost_usd": f"{self.cost:.6f}", "num_turns": str(self.steps)}
        if res is not None:
            metadata["stop_reason"] = res.stop_reason
            metadata["terminal_reason"] = res.terminal_reason
        if self.tr.init_model:
            metadata["cli_model"] = self.tr.init_model
        if self.structured_rescued:
            metadata["structured_output.rescued"] = "true"
        outcome = DriverOutcome(
            text=res.text if res is not None and res.ok else None,
            model=self.tr.model or self.tr.init_model or self.inv.model,
            provider=PROVIDER,
            metadata=metadata,
            session_id=self.session_id,
            healthy=res is not None and res.ok and self.protocol_errors == 0,
        )
        has_structured = res is not None and res.ok and res.has_structured
        structured = res.structured if res is not None and has_structured else None
        if self.inv.output_schema is not None and res is not None and res.ok:
            # CLI 2.163.0 may offer the tool as {data: object}: recover the object the model meant (see _structured).
            has_structured, structured = settle(
                self.inv.output_schema.schema, (has_structured, structured), self.structured_calls
            )
        if has_structured:
            outcome.structured = structured
            outcome.has_structured = True
        if self.inv.output_schema is not None and res is not None and res.ok and not has_structured:
            self._failure = DriverFailure(
                "CodeBuddy finished without calling the StructuredOutput tool, so there is no structured output; "
                "the answer text is kept in the result",
                reason=FailureReason.POLICY_VIOLATION,
                details={"text": res.text or "", "session_id": self.session_id},
                session_id=self.session_id,
            )
            raise _Finished
        self._outcome = outcome
        raise _Finished

    def _classify(self, res: TurnResult) -> DriverFailure:
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
                "CodeBuddy Code reached its step limit (Config.max_turns_per_run): " + "; ".join(res.errors),
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
        message = res.text or "; ".join(res.errors) or f"CodeBuddy Code ended the turn with {res.subtype or 'an error'}"
        return DriverFailure(message, reason=FailureReason.AGENT_ERROR, details=details, session_id=res.session_id)

    async def _eof(self, rc: int) -> None:
        self.exit_code = rc
        self.proc.busy = False
        await self.ctx.emit(ProcessInfo(kind=ProcessKind.EXIT, data={"returncode": rc, "pid": self.proc.pid}))
        tail = self.proc.stderr_tail()
        if self.proc.overflow is not None:
            self._failure = self.proc.overflow.failure(
                "CodeBuddy Code", exit_code=rc, stderr_tail=tail, session_id=self.session_id, pid=self.proc.pid
            )
            raise _Finished
        self._failure = DriverFailure(
            f"CodeBuddy Code exited with code {rc} before the run finished"
            + (f": {tail.strip().splitlines()[-1]}" if tail.strip() else ""),
            reason=FailureReason.AGENT_ERROR,
            details={"exit_code": rc, "stderr_tail": tail, "session_id": self.session_id, "pid": self.proc.pid},
            session_id=self.session_id,
        )
        raise _Finished


def _tool_name(frame: dict[str, Any]) -> str:
    request = frame.get("request")
    return str(request.get("tool_name") or "") if isinstance(request, dict) else ""


def _tool_use_id(frame: dict[str, Any]) -> str:
    request = frame.get("request")
    return str((request.get("tool_use_id") if isinstance(request, dict) else "") or "?")


def _plain_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text") or "") for b in content if isinstance(b, dict))
    return ""


def emit_spawn(proc: CodeBuddyProcess, resumed: str, fork: bool) -> Event:
    """The ProcessInfo event for a new CLI process (argv only: prompts and secrets never go there)."""
    return ProcessInfo(
        kind=ProcessKind.SPAWN,
        text=f"codebuddy pid {proc.pid}",
        metadata={"pid": str(proc.pid), "resume": resumed, "fork": str(fork).lower()},
        data={"pid": proc.pid, "argv": list(proc.argv), "started": time.time()},
    )
