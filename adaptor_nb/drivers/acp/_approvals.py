"""``session/request_permission`` <-> ApprovalSpec / Decision: the agent's own options carried as choices."""

from __future__ import annotations

from typing import Any

from ...driver import (
    ALL_APPROVAL_MODES,
    ApprovalCapabilities,
    ApprovalKind,
    ApprovalSpec,
    Choice,
    Decision,
)

APPROVALS = ApprovalCapabilities(kinds=frozenset({ApprovalKind.PERMISSION}), permission_modes=ALL_APPROVAL_MODES)
_ALLOW = ("allow_once", "allow_always")
_REJECT = ("reject_once", "reject_always")


def approval_spec(request_id: str, params: dict[str, Any]) -> ApprovalSpec:
    """The decision the core must make for one permission request (wire dict, camelCase)."""
    call = params.get("toolCall") or {}
    options = [o for o in params.get("options") or [] if isinstance(o, dict) and o.get("optionId")]
    choices = tuple(Choice(str(o["optionId"]), str(o.get("name") or ""), str(o.get("kind") or "")) for o in options)
    meta = call.get("_meta")
    name = str(meta.get("toolName")) if isinstance(meta, dict) and meta.get("toolName") else str(call.get("kind") or "")
    details = {
        "tool_name": name,
        "kind": call.get("kind"),
        "input": call.get("rawInput"),
        "locations": call.get("locations"),
        "content": call.get("content"),
        "options": options,
    }
    return ApprovalSpec(
        kind=ApprovalKind.PERMISSION,
        title=str(call.get("title") or name or "permission"),
        tool_call_id=str(call.get("toolCallId") or ""),
        choices=choices,
        details=details,
        source="acp",
        provider_request_id=request_id,
    )


def answer(params: dict[str, Any], decision: Decision) -> dict[str, Any]:
    """The ``RequestPermissionResponse`` outcome for ``decision``: an offered option, or ``cancelled``.

    An approval picks the option the human named (``decision.answer``) when it is an allow option, else allow
    once, else allow always; a denial picks reject once, else reject always, else cancels the request.
    """
    options = [o for o in params.get("options") or [] if isinstance(o, dict) and o.get("optionId")]
    wanted = _ALLOW if decision.allowed else _REJECT
    named = [o for o in options if o["optionId"] == decision.answer and o.get("kind") in wanted]
    ranked = named + [o for k in wanted for o in options if o.get("kind") == k]
    if not ranked:
        return {"outcome": "cancelled"}
    return {"outcome": "selected", "optionId": str(ranked[0]["optionId"])}


__all__ = ["APPROVALS", "answer", "approval_spec"]
