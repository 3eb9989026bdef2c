"""One turn of Cursor Agent: feed its stream-json through the translator, end the turn, classify the outcome."""

from __future__ import annotations

from ...driver import (
    DriverFailure,
    DriverOutcome,
    Event,
    FailureReason,
    LineTooLong,
    Notice,
    NoticeKind,
    ProcessInfo,
    ProcessKind,
    RunContext,
)
from ._process import CursorProcess, reap
from ._translate import Translator

PROVIDER = "cursor"


class CursorTurn:
    """Runs one process to its end and returns the DriverOutcome, or raises DriverFailure with the stderr tail."""

    def __init__(self, proc: CursorProcess, ctx: RunContext, *, partial: bool, model: str, grace: float) -> None:
        self.proc = proc
        self.ctx = ctx
        self.grace = grace
        self.model = model
        self.tr = Translator(ctx.transcript, partial=partial)

    async def _emit(self, events: list[Event]) -> None:
        for ev in events:
            if not self.ctx.emit_nowait(ev):
                await self.ctx.emit(ev)

    async def execute(self) -> DriverOutcome:
        ctx = self.ctx
        rc: int | None = None
        overflow: LineTooLong | None = None
        try:
            await ctx.emit(self.proc.spawn_event())
            async for frame in self.proc.frames(ctx.raw_stdout):
                if isinstance(frame, bytes):
                    await ctx.emit(
                        Notice(
                            kind=NoticeKind.LIFECYCLE.value,
                            text=f"Cursor Agent wrote a stdout line that is not a JSON object ({len(frame)} bytes); "
                            "it was skipped",
                            metadata={"code": "cursor.unparsed_line"},
                            data={"head": frame[:200].decode("utf-8", "replace")},
                        )
                    )
                    continue
                await self._emit(self.tr.line(frame))
                if self.tr.terminal is not None:
                    ctx.terminal(str(frame.get("type")), frame)
            await self._emit(self.tr.finish())
        except LineTooLong as exc:  # the CLI was stopped; the run fails naming the bound
            overflow = exc
        finally:
            rc = await reap(self.proc, self.grace)
            await ctx.emit(ProcessInfo(kind=ProcessKind.EXIT, data={"returncode": rc, "pid": self.proc.pid}))
        if overflow is not None:
            raise DriverFailure(
                f"Cursor Agent {overflow}",
                reason=FailureReason.AGENT_ERROR,
                details={
                    "exit_code": rc,
                    "stderr_tail": self.proc.stderr_tail(),
                    "max_line_bytes": overflow.limit,
                    "session_id": self.tr.session_id,
                    "pid": self.proc.pid,
                },
                session_id=self.tr.session_id,
            )
        return await self._outcome(rc)

    async def _outcome(self, rc: int | None) -> DriverOutcome:
        tr = self.tr
        term = tr.terminal
        details: dict[str, object] = {
            "exit_code": rc,
            "stderr_tail": self.proc.stderr_tail(),
            "session_id": tr.session_id,
            "pid": self.proc.pid,
        }
        if term is None:
            why = "was killed" if rc is not None and rc < 0 else f"exited with code {rc}"
            tail = self.proc.stderr_tail().strip()
            raise DriverFailure(
                f"Cursor Agent {why} before its result line" + (f": {tail[-500:]}" if tail else ""),
                reason=FailureReason.AGENT_ERROR,
                details=details,
                session_id=tr.session_id,
            )
        if not term.ok:
            details.update({"subtype": term.subtype, "request_id": term.request_id})
            message = term.error or term.text or term.subtype or "error"
            raise DriverFailure(
                f"Cursor Agent reported {term.subtype or 'an error'}: {message}",
                reason=FailureReason.AGENT_ERROR,
                details=details,
                session_id=term.session_id,
            )
        text = term.text if term.text is not None else tr.text
        await self.ctx.turn_end(usage=None, text=text)  # Cursor reports no token counts: usage stays unobserved
        metadata = {"session_id": term.session_id}
        if term.request_id:
            metadata["request_id"] = term.request_id
        if term.duration_ms is not None:
            metadata["duration_ms"] = str(term.duration_ms)
        if term.duration_api_ms is not None:
            metadata["duration_api_ms"] = str(term.duration_api_ms)
        if rc not in (0, None):
            metadata["exit_code"] = str(rc)
        return DriverOutcome(
            text=text,
            model=tr.model or self.model,
            provider=PROVIDER,
            usage=None,
            metadata=metadata,
            session_id=term.session_id,
            healthy=rc in (0, None),
        )
