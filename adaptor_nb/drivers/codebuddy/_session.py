"""What a CodeBuddy run does beyond the Claude family's: plan review, turns the CLI ends without a result, top-level
``error`` lines, host-tool errors, its step count and the structured answer of its fallback StructuredOutput."""

from __future__ import annotations

from typing import Any, TypeVar

from ...driver import (
    ClaudeFamilyRun,
    ClaudeLikeResult,
    DriverFailure,
    DriverOutcome,
    Event,
    FailureReason,
    MessageFailure,
    ResumeRejectedError,
    TranscriptItem,
)
from ._host_errors import host_error
from ._structured import StructuredCalls, rescue, settle

PLAN_TOOL = "ExitPlanMode"
E = TypeVar("E", bound=Event)


class CodeBuddyRun(ClaudeFamilyRun):
    """The family's run with CodeBuddy's own turn ends and structured-output recovery."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.plan_path = ""
        self.plan_denied = ""  # the tool_use_id of an ExitPlanMode that was denied: the CLI writes no result after it
        self.plan_abort: Exception | None = None  # the policy's abort for that denial, raised once the turn ended
        self.structured_calls = StructuredCalls()
        self.structured_rescued = False  # the CLI gave up on a valid StructuredOutput call (see _structured)
        self.steps = 0  # this run's share of the CLI's cumulative num_turns

    def _sourced(self, ev: E) -> E:
        return host_error(super()._sourced(ev), self.inv.tools)

    # -- frames ------------------------------------------------------------------------------------------

    def note_assistant(self, frame: dict[str, Any]) -> None:
        super().note_assistant(frame)
        self._note_plan_file(frame)
        self.structured_calls.note(frame)

    async def _after_user(self, frame: dict[str, Any]) -> None:
        why = self._ended_without_result(frame)
        if why:
            await self._end_without_result(why)

    async def _other(self, t: Any, frame: dict[str, Any]) -> None:
        if t == "error":
            self._error_line(frame)
        await super()._other(t, frame)

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

    # -- plan review -------------------------------------------------------------------------------------

    def _stops_later(self, frame: dict[str, Any], exc: Exception) -> bool:
        if _tool_name(frame) != PLAN_TOOL:
            return False
        # A refused plan ends the CLI's turn with no result once its tool result is written: the run ends there,
        # after the text streamed before it, so the partial result keeps that text.
        self.plan_denied = _tool_use_id(frame)
        self.plan_abort = exc
        return True

    def _decided(self, frame: dict[str, Any], action: str) -> None:
        if action == "deny" and _tool_name(frame) == PLAN_TOOL:
            self.plan_denied = _tool_use_id(frame)

    def _note_plan_file(self, frame: dict[str, Any]) -> None:
        """Remember the plan file a Write under ``.codebuddy/plans/`` created (ExitPlanMode carries no plan)."""
        message = frame.get("message")
        for block in (message.get("content") if isinstance(message, dict) else None) or ():
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "Write":
                path = (block.get("input") or {}).get("file_path")
                if isinstance(path, str) and "/.codebuddy/plans/" in path:
                    self.plan_path = path

    def _plan_for(self, frame: dict[str, Any]) -> tuple[str, str]:
        if _tool_name(frame) != PLAN_TOOL or not self.plan_path:
            return "", ""
        try:
            with open(self.plan_path, encoding="utf-8", errors="replace") as fh:
                return fh.read(1 << 20), self.plan_path
        except OSError:
            return "", self.plan_path

    # -- turns without a result --------------------------------------------------------------------------

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
        await self.settle_steers()
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
            self.end(failure=self.plan_abort)
        if self.interrupt_claims:
            self._fail_messages(self.interrupt_claims, MessageFailure.PROVIDER_REJECTED)
            self.interrupt_claims = []
        self.interrupting = False
        metadata = {"session_id": self.session_id, "cost_usd": f"{self.cost:.6f}", "terminal_reason": why}
        if self.tr.init_model:
            metadata["cli_model"] = self.tr.init_model
        outcome = DriverOutcome(
            text=None,
            model=self.tr.model or self.tr.init_model or self.inv.model,
            provider=self.profile.provider,
            metadata=metadata,
            session_id=self.session_id,
            healthy=False,
        )
        self.end(outcome=outcome)

    # -- results -----------------------------------------------------------------------------------------

    def _turn_ended(self, res: ClaudeLikeResult) -> ClaudeLikeResult:
        if res.num_turns >= self.proc.num_turns_total:
            self.steps += res.num_turns - self.proc.num_turns_total
            self.proc.num_turns_total = res.num_turns
        if self.inv.output_schema is not None and not (self.user_interrupted or self.interrupting):
            rescued = rescue(self.inv.output_schema.schema, res, self.structured_calls)
            if rescued is not None:
                res, self.structured_rescued = rescued, True
        return res

    def _structured(self, res: ClaudeLikeResult) -> tuple[bool, Any]:
        reported = super()._structured(res)
        if self.inv.output_schema is None:
            return reported
        # CLI 2.163.0 may offer the tool as {data: object}: recover the object the model meant (see _structured).
        return settle(self.inv.output_schema.schema, reported, self.structured_calls)

    def _finish_metadata(self, metadata: dict[str, str]) -> None:
        metadata["num_turns"] = str(self.steps)
        if self.structured_rescued:
            metadata["structured_output.rescued"] = "true"


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
