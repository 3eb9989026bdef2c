"""AG-UI resume entries as answers to approval requests."""

from __future__ import annotations

from typing import Any

from ag_ui.core import ResumeEntry

from ..._approvals import ApprovalRequest
from ..._enums import ApprovalKind

BY = "web"
"""``Decision.by`` of an answer given through the bridge (the notebook's view shows "approved by web")."""


class ResumeError(ValueError):
    """A resume entry that cannot answer its interrupt; nothing was changed."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def check(entry: ResumeEntry, request: ApprovalRequest) -> None:
    """Raise ResumeError when ``entry`` is not an answer ``request`` accepts (before anything is resolved)."""
    if entry.status == "cancelled":
        return
    payload = entry.payload
    if request.kind is ApprovalKind.QUESTION:
        if _answer_of(payload) is None and not _denied(payload):
            raise ResumeError(
                f"interrupt {entry.interrupt_id} is a question: resume it with payload {{'answer': '...'}}",
                "invalid_resume_payload",
            )
        return
    if not isinstance(payload, bool | dict) and payload is not None:
        raise ResumeError(
            f"interrupt {entry.interrupt_id} needs payload {{'approved': true|false, 'reason': '...'}}",
            "invalid_resume_payload",
        )
    choice = payload.get("choice") if isinstance(payload, dict) else None
    if choice and choice not in {c.key for c in request.choices}:
        raise ResumeError(f"interrupt {entry.interrupt_id} offers no choice {choice!r}", "invalid_resume_payload")


def apply(entry: ResumeEntry, request: ApprovalRequest) -> None:
    """Answer ``request`` from ``entry`` (raises ApprovalResolvedError when someone else answered first)."""
    payload = entry.payload
    if entry.status == "cancelled":
        request.deny(_reason(payload) or "the interrupt was cancelled by the client", by=BY)
        return
    if request.kind is ApprovalKind.QUESTION:
        answer = _answer_of(payload)
        if answer is None:
            request.deny(_reason(payload) or "declined", by=BY)
        else:
            request.answer(answer, by=BY)
        return
    if _denied(payload):
        request.deny(_reason(payload), by=BY)
    else:
        choice = payload.get("choice") if isinstance(payload, dict) else None
        request.approve(str(choice or ""), by=BY)


def _denied(payload: Any) -> bool:
    if payload is False:
        return True
    return isinstance(payload, dict) and (payload.get("approved") is False or payload.get("action") == "deny")


def _answer_of(payload: Any) -> str | None:
    if isinstance(payload, str) and payload:
        return payload
    if isinstance(payload, dict) and isinstance(payload.get("answer"), str) and payload["answer"]:
        return str(payload["answer"])
    return None


def _reason(payload: Any) -> str:
    if isinstance(payload, dict) and isinstance(payload.get("reason"), str):
        return str(payload["reason"])
    return ""
