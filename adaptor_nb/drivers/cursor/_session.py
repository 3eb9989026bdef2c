"""One turn of Cursor Agent: feed its stream-json through the translator, end the turn, classify the outcome."""

from __future__ import annotations

import re

from ...driver import (
    DriverFailure,
    DriverOutcome,
    Event,
    EventMeta,
    EventSourceMeta,
    FailureReason,
    HostedTools,
    LineTooLong,
    Notice,
    NoticeKind,
    ProcessInfo,
    ProcessKind,
    ResumeRejectedError,
    RunContext,
    mark_host_tool,
    with_meta,
)
from ._process import CursorProcess, reap
from ._translate import Translator, unreadable_frame

PROVIDER = "cursor"
# How a refused ``--resume`` reads on stderr or in an error result: broad on purpose (the wording is not documented).
_UNKNOWN_SESSION = re.compile(
    r"\b(chat|session|conversation|thread)\b[^\n]{0,120}?\b(not found|does not exist|doesn't exist|unknown|invalid)"
    r"|\bno (chat|session|conversation|thread)\b[^\n]{0,40}?\bfound",
    re.IGNORECASE,
)


class _Fresh(Exception):
    """Internal: the CLI answered ``--resume ID`` with a different session (it started a new chat instead)."""


class CursorTurn:
    """Runs one process to its end and returns the DriverOutcome, or raises DriverFailure with the stderr tail."""

    def __init__(
        self,
        proc: CursorProcess,
        ctx: RunContext,
        *,
        partial: bool,
        model: str,
        grace: float,
        resume: str = "",
        thread_key: str = "",
        hosted: HostedTools | None = None,
    ) -> None:
        self.hosted = hosted
        self.proc = proc
        self.resume = resume
        self.thread_key = thread_key
        self.ctx = ctx
        self.grace = grace
        self.model = model
        self.tr = Translator(ctx.transcript, partial=partial)
        self.line = 0  # the stdout line being translated (one-based): the events' provider sequence

    async def _emit(self, events: list[Event]) -> None:
        for ev in events:
            ev = mark_host_tool(ev, self.hosted)  # the Agent's own tools under their own names
            await self.ctx.emit(self._sourced(ev))

    def _sourced(self, ev: Event) -> Event:
        """``ev`` carrying its provider coordinates: the Cursor session (chat) id and the stdout line it came from."""
        session = self.tr.session_id
        if not session or ev.meta.source is not None:
            return ev
        return with_meta(ev, EventMeta(source=EventSourceMeta(thread_id=session, sequence=self.line)))

    async def execute(self) -> DriverOutcome:
        ctx = self.ctx
        rc: int | None = None
        overflow: LineTooLong | None = None
        fresh = ""
        try:
            await ctx.emit(self.proc.spawn_event())
            async for frame in self.proc.frames(ctx.raw_stdout):
                self.line += 1
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
                try:
                    events = self.tr.line(frame)
                except Exception as exc:  # a frame with fields of unexpected types or shapes: reported, skipped
                    await ctx.emit(unreadable_frame(frame, exc))
                    continue
                if self.resume and self.tr.session_id and self.tr.session_id != self.resume:
                    # Cursor does not refuse an unknown id: it silently starts a new chat without the history.
                    fresh = self.tr.session_id
                    self.proc.cli.kill_now()
                    break
                await self._emit(events)
                if self.tr.terminal is not None:
                    ctx.terminal(str(frame.get("type")), frame)
            if not fresh:
                await self._emit(self.tr.finish())
        except LineTooLong as exc:  # the CLI was stopped; the run fails naming the bound
            overflow = exc
        finally:
            rc = await reap(self.proc, self.grace)
            await ctx.emit(ProcessInfo(kind=ProcessKind.EXIT, data={"returncode": rc, "pid": self.proc.pid}))
        if overflow is not None:
            raise overflow.failure(
                "Cursor Agent",
                exit_code=rc,
                stderr_tail=self.proc.stderr_tail(),
                session_id=self.tr.session_id,
                pid=self.proc.pid,
            )
        if fresh:
            self._rejected(f"it started a new chat {fresh!r} instead", rc)
        return await self._outcome(rc)

    def _rejected(self, why: str, rc: int | None) -> None:
        """Raise ResumeRejectedError: the core falls back to a fresh session once, or fails under resume_only."""
        raise ResumeRejectedError(
            f"Cursor Agent could not resume session {self.resume!r}: {why}",
            key=self.thread_key,
            details={"exit_code": rc, "stderr_tail": self.proc.stderr_tail(), "session_id": self.resume},
        )

    def _unknown_session(self, text: str) -> bool:
        return bool(self.resume) and self.tr.session_id in ("", self.resume) and bool(_UNKNOWN_SESSION.search(text))

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
            if not tr.session_id and rc not in (0, None) and self._unknown_session(tail):
                self._rejected(tail.splitlines()[-1] if tail else why, rc)
            raise DriverFailure(
                f"Cursor Agent {why} before its result line" + (f": {tail[-500:]}" if tail else ""),
                reason=FailureReason.INFRASTRUCTURE,
                details=details,
                session_id=tr.session_id,
            )
        if not term.ok:
            details.update({"subtype": term.subtype, "request_id": term.request_id})
            message = term.error or term.text or term.subtype or "error"
            if not tr.text and self._unknown_session(message):
                self._rejected(message, rc)
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
