"""Maps app-server approval requests to ApprovalSpecs, and the core's Decisions back to app-server answers."""

from __future__ import annotations

from typing import Any

from ...driver import (
    ApprovalKind,
    ApprovalSpec,
    Choice,
    Decision,
)
from ._translate import ToolInfo

COMMAND_APPROVAL = "item/commandExecution/requestApproval"
FILE_APPROVAL = "item/fileChange/requestApproval"
PERMISSIONS_APPROVAL = "item/permissions/requestApproval"
LEGACY_EXEC_APPROVAL = "execCommandApproval"
LEGACY_PATCH_APPROVAL = "applyPatchApproval"
APPROVAL_METHODS = frozenset(
    {COMMAND_APPROVAL, FILE_APPROVAL, PERMISSIONS_APPROVAL, LEGACY_EXEC_APPROVAL, LEGACY_PATCH_APPROVAL}
)
# Questions from the agent; Codex only asks them outside its default collaboration mode. They are always declined.
USER_INPUT_REQUEST = "item/tool/requestUserInput"
# An MCP elicitation is a question from an MCP server, except when Codex uses it to ask before an MCP tool call.
ELICITATION_REQUEST = "mcpServer/elicitation/request"


def is_approval(method: str, params: dict[str, Any]) -> bool:
    """Whether a server request asks for a permission decision (rather than a question or something else)."""
    if method in APPROVAL_METHODS:
        return True
    meta = params.get("_meta")
    return (
        method == ELICITATION_REQUEST and isinstance(meta, dict) and meta.get("codex_approval_kind") == "mcp_tool_call"
    )


_CHOICES = {
    "accept": Choice("accept", "Accept", "Run it once"),
    "acceptForSession": Choice("acceptForSession", "Accept for session", "Do not ask again in this session"),
    "acceptWithExecpolicyAmendment": Choice(
        "acceptWithExecpolicyAmendment", "Accept and allow similar", "Allow matching commands from now on"
    ),
    "decline": Choice("decline", "Decline", "Refuse; the agent continues the turn"),
    "cancel": Choice("cancel", "Cancel", "Refuse and stop the turn"),
}
_FILE_CHOICES = ("accept", "acceptForSession", "decline", "cancel")


def _offered(params: dict[str, Any]) -> tuple[Choice, ...]:
    keys: list[str] = []
    for entry in params.get("availableDecisions") or []:
        key = entry if isinstance(entry, str) else next(iter(entry), "") if isinstance(entry, dict) else ""
        if key in _CHOICES and key not in keys:
            keys.append(key)
    for key in ("accept", "acceptForSession", "decline", "cancel"):
        if key not in keys:
            keys.append(key)
    order = list(_CHOICES)
    return tuple(_CHOICES[k] for k in sorted(keys, key=order.index))


def approval_spec(
    method: str, request_id: int | str, params: dict[str, Any], tools: dict[str, ToolInfo]
) -> ApprovalSpec:
    """The decision the core must make for one app-server approval request."""
    item_id = str(params.get("itemId") or params.get("callId") or params.get("call_id") or "")
    base = {"thread_id": params.get("threadId"), "turn_id": params.get("turnId"), "item_id": item_id, "method": method}
    if method in (COMMAND_APPROVAL, LEGACY_EXEC_APPROVAL):
        command = params.get("command", "")
        if isinstance(command, list):
            command = " ".join(str(c) for c in command)
        details = {
            **base,
            "command": command,
            "cwd": params.get("cwd"),
            "reason": params.get("reason"),
            "actions": params.get("commandActions"),
            "proposed_execpolicy_amendment": params.get("proposedExecpolicyAmendment"),
        }
        return ApprovalSpec(
            kind=ApprovalKind.PERMISSION,
            title=f"Run command: {command}",
            tool_call_id=item_id,
            choices=_offered(params),
            details=details,
            source="exec_command",
            provider_request_id=str(request_id),
        )
    if method in (FILE_APPROVAL, LEGACY_PATCH_APPROVAL):
        info = tools.get(item_id)
        changes = info.args.get("changes", []) if info else []
        paths = ", ".join(str(c.get("path", "")) for c in changes) or "files"
        details = {**base, "changes": changes, "reason": params.get("reason"), "grant_root": params.get("grantRoot")}
        return ApprovalSpec(
            kind=ApprovalKind.PERMISSION,
            title=f"Apply changes to {paths}",
            tool_call_id=item_id,
            choices=tuple(_CHOICES[k] for k in _FILE_CHOICES),
            details=details,
            source="apply_patch",
            provider_request_id=str(request_id),
        )
    if method == ELICITATION_REQUEST:
        meta = params.get("_meta") or {}
        name = f"mcp__{params.get('serverName', '')}__{meta.get('tool_name', '')}"
        call_id = next((i for i, info in reversed(tools.items()) if info.name == name), "")
        details = {
            **base,
            "item_id": call_id,
            "server": params.get("serverName"),
            "tool": meta.get("tool_name"),
            "arguments": meta.get("tool_params"),
        }
        return ApprovalSpec(
            kind=ApprovalKind.PERMISSION,
            title=str(params.get("message") or f"Allow the MCP tool {name}?"),
            tool_call_id=call_id,
            choices=(_CHOICES["accept"], _CHOICES["decline"], _CHOICES["cancel"]),
            details=details,
            source=name,
            provider_request_id=str(request_id),
        )
    details = {
        **base,
        "permissions": params.get("permissions"),
        "reason": params.get("reason"),
        "cwd": params.get("cwd"),
    }
    choices = (Choice("turn", "Grant for this turn"), Choice("session", "Grant for the session"), _CHOICES["decline"])
    return ApprovalSpec(
        kind=ApprovalKind.PERMISSION,
        title="Grant additional permissions",
        tool_call_id=item_id,
        choices=choices,
        details=details,
        source="request_permissions",
        provider_request_id=str(request_id),
    )


def approval_answer(method: str, params: dict[str, Any], decision: Decision) -> dict[str, Any]:
    """The app-server result for ``decision``: accept / acceptForSession / decline / cancel and friends."""
    choice = decision.answer
    if method == ELICITATION_REQUEST:
        if decision.allowed and choice not in ("decline", "cancel"):
            return {"action": "accept", "content": {}}
        return {"action": "cancel" if decision.interrupt or choice == "cancel" else "decline", "content": None}
    if method == PERMISSIONS_APPROVAL:
        if decision.allowed and choice != "decline":
            return {
                "permissions": params.get("permissions") or {},
                "scope": "session" if choice == "session" else "turn",
            }
        return {"permissions": {}}
    if method in (LEGACY_EXEC_APPROVAL, LEGACY_PATCH_APPROVAL):
        if decision.allowed and choice != "decline":
            return {"decision": "approved_for_session" if choice == "acceptForSession" else "approved"}
        return {"decision": "abort" if decision.interrupt or choice == "cancel" else "denied"}
    if decision.allowed and choice not in ("decline", "cancel"):
        if choice == "acceptForSession":
            return {"decision": "acceptForSession"}
        amendment = params.get("proposedExecpolicyAmendment")
        if choice == "acceptWithExecpolicyAmendment" and method == COMMAND_APPROVAL and amendment:
            return {"decision": {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": amendment}}}
        return {"decision": "accept"}
    return {"decision": "cancel" if decision.interrupt or choice == "cancel" else "decline"}


def declined_question(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The answer that declines an agent question (user input or MCP elicitation)."""
    if method == ELICITATION_REQUEST:
        return {"action": "decline", "content": None}
    return {"answers": {}}
