"""Cursor's print mode cannot ask for approval: the run's permission policy becomes the CLI's force flag or not.

AUTO_APPROVE adds ``--force`` (the CLI runs every tool it would otherwise ask about); AUTO_DENY and INHERIT leave it
out, so actions that need approval are rejected by the CLI itself. ASK is refused before launch because it is not
declared; plan reviews and questions are never raised by the CLI in print mode, so they are not offered.
"""

from __future__ import annotations

from ... import Policy
from ...driver import ApprovalCapabilities, ApprovalMode

APPROVALS = ApprovalCapabilities(
    kinds=frozenset(),
    permission_modes=frozenset({ApprovalMode.AUTO_APPROVE, ApprovalMode.AUTO_DENY}),
    plan_review_modes=frozenset(),
    question_modes=frozenset(),
    retry=False,
)


def force_flag(policy: Policy) -> list[str]:
    """``["--force"]`` when the run auto-approves permissions, else nothing."""
    return ["--force"] if policy.approvals.permission is ApprovalMode.AUTO_APPROVE else []
