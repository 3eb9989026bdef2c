"""The end of a Claude-family CLI's turn: its ``result`` line, the next turn's input, and the run's outcome or
failure (a failed turn, the CLI's exit)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, NoReturn

from ..._enums import Boundary, FailureReason, MessageFailure, ProcessKind
from ..._errors import ResumeRejectedError
from ..._events import ProcessInfo
from ..._result import TranscriptItem
from .._claude_stream import ClaudeLikeResult, parse_claude_like_result
from .._spi import ClaimedMessage, DriverFailure, DriverOutcome

if TYPE_CHECKING:
    from .._claude_stream import ClaudeLikeTranslator
    from .._spi import Invocation, RunContext
    from ._process import ClaudeFamilyProcess
    from ._profile import ClaudeFamilyProfile
    from ._steer import Pending

_RETRYABLE = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


class Finished(Exception):
    """Internal: the run reached its end (the loop unwinds with this)."""


class TurnEnds:
    """The turn-end half of ``ClaudeFamilyRun``. The first three methods are hooks a driver's own run may
    override."""

    if TYPE_CHECKING:
        profile: ClaudeFamilyProfile
        proc: ClaudeFamilyProcess
        ctx: RunContext
        inv: Invocation
        tr: ClaudeLikeTranslator
        pending: dict[str, Pending]
        prompt_uuid: str
        echo_supported: bool
        interrupt_claims: list[ClaimedMessage]
        interrupting: bool
        user_interrupted: str
        last: ClaudeLikeResult | None
        session_id: str
        resuming: bool
        protocol_errors: int
        turn_active: bool
        cost: float
        exit_code: int | None
        _in_tool_phase: bool
        _outcome: DriverOutcome | None
        _failure: BaseException | None

        def _rewatch(self) -> None: ...
        def _delivered(self, p: Pending) -> None: ...
        async def settle_steers(self) -> None: ...
        def _write_user(
            self,
            text: str,
            claimed: list[ClaimedMessage],
            boundary: Boundary,
            mechanism: str,
            also: list[ClaimedMessage] | None = None,
        ) -> str: ...

    def end(self, outcome: DriverOutcome | None = None, failure: BaseException | None = None) -> NoReturn:
        """End the run now with ``outcome`` or ``failure`` (for a driver's own ends of a turn)."""
        if failure is not None:
            self._failure = failure
        else:
            self._outcome = outcome
        raise Finished

    def _turn_ended(self, res: ClaudeLikeResult) -> ClaudeLikeResult:
        """A ``result`` line was read (after cost bookkeeping): the result the run goes on with."""
        return res

    def _structured(self, res: ClaudeLikeResult) -> tuple[bool, Any]:
        """The structured answer of a successful last turn."""
        return res.has_structured, res.structured

    def _finish_metadata(self, metadata: dict[str, str]) -> None:
        """Add the driver's own keys to the outcome's metadata."""

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
            reason=FailureReason.INFRASTRUCTURE,
            details={"exit_code": rc, "stderr_tail": tail, "session_id": self.session_id, "pid": self.proc.pid},
            session_id=self.session_id,
        )
        raise Finished
