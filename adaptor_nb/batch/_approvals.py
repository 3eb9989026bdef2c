"""Approvals inside a batch with no one watching: the policy's fallback applies at once, not after a timeout."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .._enums import ApprovalKind

if TYPE_CHECKING:
    from .._approvals import ApprovalRequest

HEADLESS_REASON = "no approver in a headless batch"


class HeadlessApprovals:
    """An ``on_approval`` handler: approves tools listed in ``approve_tools``, denies the rest at once.

    A denial goes through the run's approval policy, so its ``on_reject`` fallback (abort by default) decides what
    the row does. Picklable, so it travels to remote workers with the row settings.
    """

    def __init__(self, approve_tools: Iterable[str] = ()) -> None:
        self.approve_tools = frozenset(approve_tools)

    def __call__(self, request: ApprovalRequest) -> None:
        tool = str(request.details.get("tool") or request.details.get("tool_name") or "")
        if request.kind is ApprovalKind.PERMISSION and tool and tool in self.approve_tools:
            request.approve()
        else:
            request.deny(f"{HEADLESS_REASON}: {request.title or request.kind.value}")

    def __repr__(self) -> str:
        return f"HeadlessApprovals(approve_tools={sorted(self.approve_tools)})"
