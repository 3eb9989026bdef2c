"""Plain words for what the view reports: message delivery, tool states and run failures (no snake_case codes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._errors import ApprovalDenied, RunError

_DELIVERED = {
    "in_run": "delivered while the agent worked",
    "turn_end": "delivered at the end of a turn",
    "interrupt": "delivered by interrupting the agent",
}
_NOT_DELIVERED = {
    "cancelled": "the run was cancelled",
    "provider_rejected": "the agent's CLI refused it",
    "timeout": "it timed out",
    "limit_exceeded": "too many messages were waiting",
    "run_failed": "the run failed first",
}
TOOL_STATES = {
    "running": "running",
    "waiting": "waiting for approval",
    "done": "done",
    "error": "failed",
    "denied": "denied",
}
PLAN_MARKS = {"completed": "☑", "in_progress": "◐", "pending": "☐"}
"""The mark each plan item's status shows with (ticked, under way, open)."""
_REASONS = {
    "agent_error": "The agent failed",
    "timeout": "Timed out",
    "cancelled": "Cancelled",
    "approval_timeout": "No answer to an approval in time",
    "policy_violation": "Refused by policy",
}


def message_words(entry: Mapping[str, Any]) -> str:
    """Where a sent message stands, in words: "delivered while the agent worked", "queued for the next turn"..."""
    state = entry.get("state", "")
    if state == "delivered":
        return _DELIVERED.get(str(entry.get("boundary") or ""), "delivered")
    if state == "failed":
        reason = str(entry.get("reason") or "")
        return f"not delivered: {_NOT_DELIVERED.get(reason, reason.replace('_', ' ') or 'unknown reason')}"
    if state == "sending":
        return "sending"
    if entry.get("when") == "after_turn":
        return "queued for the next turn"
    if entry.get("when") == "interrupt":
        return "waiting to interrupt the agent"
    return "waiting to be delivered"


def failure_words(err: BaseException) -> str:
    """A run's failure in one plain sentence; a denial (already shown on its card) only says that the run stopped."""
    if isinstance(err, ApprovalDenied):
        return "The run stopped because a request above was denied."
    if isinstance(err, RunError):
        lead = _REASONS.get(err.reason.value, err.reason.value.replace("_", " ").capitalize())
        return f"{lead}: {err.message}"
    return f"{type(err).__name__}: {err}"
