"""The frame of one AG-UI run: RUN_STARTED, and the terminal event (finished, interrupted, cancelled or failed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    Interrupt,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    TokenUsage,
)

from ..._approvals import ApprovalRequest
from ..._enums import ApprovalKind
from ..._errors import AdaptorError, RunCancelled, RunError
from ..._events import Done
from ..._result import Result, Usage
from ._mapping import now_ms


def started(thread_id: str, run_id: str) -> RunStartedEvent:
    return RunStartedEvent(thread_id=thread_id, run_id=run_id, protocol_version=PROTOCOL_VERSION, timestamp=now_ms())


def failed(message: str, code: str) -> RunErrorEvent:
    return RunErrorEvent(message=message, code=code, timestamp=now_ms())


def token_usage(result: Result | None) -> list[TokenUsage] | None:
    usage: Usage | None = result.usage if result is not None else None
    if usage is None:
        return None
    return [
        TokenUsage(
            provider=result.provider or None if result is not None else None,
            model=result.model or None if result is not None else None,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            total_tokens=usage.input_tokens + usage.output_tokens,
            cached_input_tokens=min(usage.cached_input_tokens, usage.input_tokens) or None,
        )
    ]


def finished(thread_id: str, run_id: str, done: Done) -> BaseEvent:
    """The terminal event for a Stream's Done: RUN_FINISHED (success or cancelled) or RUN_ERROR."""
    err = done.err
    if err is None:
        result = done.result
        value: dict[str, Any] | None = None
        if result is not None:
            value = {"runId": result.run_id, "text": result.text, "turns": result.turns}
        return RunFinishedEvent(
            thread_id=thread_id, run_id=run_id, result=value, usage=token_usage(result), timestamp=now_ms()
        )
    if isinstance(err, RunCancelled):
        return RunFinishedEvent(
            thread_id=thread_id, run_id=run_id, outcome=RunFinishedCancelledOutcome(), timestamp=now_ms()
        )
    if isinstance(err, RunError):
        message = str(err) or err.reason.value
        return RunErrorEvent(message=message, code=err.reason.value, usage=token_usage(err.result), timestamp=now_ms())
    code = type(err).__name__ if isinstance(err, AdaptorError) else "internal_error"
    return RunErrorEvent(message=str(err) or type(err).__name__, code=code, timestamp=now_ms())


def interrupt_of(request: ApprovalRequest) -> Interrupt:
    """One AG-UI interrupt for a pending approval request: ``tool_approval`` or ``question``, with its choices."""
    question = request.kind is ApprovalKind.QUESTION
    choices = [{"key": c.key, "label": c.label or c.key, "description": c.description} for c in request.choices]
    if question:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {"answer": {"type": "string", "examples": [c["key"] for c in choices]}},
            "required": ["answer"],
        }
    else:
        schema = {
            "type": "object",
            "properties": {
                "approved": {"type": "boolean"},
                "reason": {"type": "string"},
                **({"choice": {"enum": [c["key"] for c in choices]}} if choices else {}),
            },
            "required": ["approved"],
        }
    return Interrupt(
        id=request.id,
        reason="question" if question else "tool_approval",
        message=request.title or None,
        tool_call_id=request.tool_call_id or None,
        response_schema=schema,
        expires_at=request.deadline.isoformat() if request.deadline is not None else None,
        metadata={"kind": request.kind.value, "choices": choices, "source": request.source or None},
    )


def interrupted(thread_id: str, run_id: str, requests: Sequence[ApprovalRequest]) -> RunFinishedEvent:
    outcome = RunFinishedInterruptOutcome(interrupts=[interrupt_of(r) for r in requests])
    return RunFinishedEvent(thread_id=thread_id, run_id=run_id, outcome=outcome, timestamp=now_ms())
