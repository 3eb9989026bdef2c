"""``can_use_tool`` requests of a Claude-family CLI as ApprovalSpecs, and decisions as ``control_response`` lines.

Claude Code reads ``{behavior, message, updatedInput}``; a profile with ``allowed_key`` (CodeBuddy Code) reads
``{allowed, reason, interrupt, updatedInput, tool_use_id}`` and takes anything else (such as ``behavior``) as a deny.
"""

from __future__ import annotations

import json
from typing import Any

from ..._approvals import Choice, Decision
from ..._enums import ApprovalKind
from .._spi import ApprovalSpec
from ._profile import ClaudeFamilyProfile

PLAN_TOOL = "ExitPlanMode"
QUESTION_TOOL = "AskUserQuestion"
DEFER_TOOL = "DeferExecuteTool"


def _summary(tool: str, request: dict[str, Any], tool_input: dict[str, Any]) -> str:
    for key in ("description",):
        value = request.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    for key in ("command", "file_path", "path", "url", "pattern", "query"):
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _questions(tool_input: dict[str, Any]) -> list[dict[str, Any]]:
    qs = tool_input.get("questions")
    if isinstance(qs, list):
        return [q for q in qs if isinstance(q, dict)]
    if isinstance(tool_input.get("question"), str):
        return [tool_input]
    return []


def _options(question: dict[str, Any]) -> tuple[Choice, ...]:
    raw = question.get("options")
    if not isinstance(raw, list):
        raw = question.get("choices")
    if not isinstance(raw, list):
        raw = []
    out: list[Choice] = []
    for opt in raw:
        if isinstance(opt, str):
            out.append(Choice(key=opt, label=opt))
        elif isinstance(opt, dict) and isinstance(opt.get("label"), str):
            desc = opt.get("description")
            out.append(Choice(key=opt["label"], label=opt["label"], description=desc if isinstance(desc, str) else ""))
    return tuple(out)


def unwrap(tool: str, tool_input: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool really asked for: a ``DeferExecuteTool`` call names it in ``toolName`` with ``params``."""
    if tool == DEFER_TOOL and isinstance(tool_input.get("toolName"), str):
        params = tool_input.get("params")
        return str(tool_input["toolName"]), params if isinstance(params, dict) else {}
    return tool, tool_input


def approval_spec(
    frame: dict[str, Any], profile: ClaudeFamilyProfile, plan: str = "", plan_path: str = ""
) -> ApprovalSpec:
    """The ApprovalSpec for one ``control_request`` of subtype ``can_use_tool``.

    ``plan`` is the text of a plan file the CLI wrote before ExitPlanMode, when the tool itself carries none.
    """
    request = frame.get("request") if isinstance(frame.get("request"), dict) else {}
    assert isinstance(request, dict)
    raw_input = request.get("input")
    tool, tool_input = unwrap(str(request.get("tool_name") or ""), raw_input if isinstance(raw_input, dict) else {})
    tool_use_id = str(request.get("tool_use_id") or "")
    request_id = str(frame.get("request_id") or "")
    details: dict[str, Any] = {"tool_name": tool, "input": tool_input}
    for key in ("permission_suggestions", "blocked_path", "decision_reason", "decision_reason_type", "agent_id"):
        if key in request:
            details[key] = request[key]
    if tool == PLAN_TOOL:
        given = tool_input.get("plan")
        details["plan"] = plan or (given if isinstance(given, str) else "")
        if plan_path:
            details["plan_path"] = plan_path
        return ApprovalSpec(
            kind=ApprovalKind.PLAN_REVIEW,
            title="Review the plan",
            tool_call_id=tool_use_id,
            details=details,
            source=f"{profile.name}.exit_plan_mode",
            provider_request_id=request_id,
        )
    if tool == QUESTION_TOOL:
        questions = _questions(tool_input)
        details["questions"] = questions
        first = questions[0] if questions else {}
        title = str(first.get("question") or f"{profile.short} has a question")
        return ApprovalSpec(
            kind=ApprovalKind.QUESTION,
            title=title,
            tool_call_id=tool_use_id,
            choices=_options(first),
            details=details,
            source=f"{profile.name}.ask_user_question",
            provider_request_id=request_id,
        )
    name = str(request.get("display_name") or tool)
    summary = _summary(tool, request, tool_input)
    return ApprovalSpec(
        kind=ApprovalKind.PERMISSION,
        title=f"{name}: {summary}" if summary else name,
        tool_call_id=tool_use_id,
        details=details,
        source=f"{profile.name}.can_use_tool",
        provider_request_id=request_id,
    )


def _answers(tool_input: dict[str, Any], answer: str) -> dict[str, str]:
    questions = _questions(tool_input)
    try:
        parsed = json.loads(answer)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and parsed and all(isinstance(v, str) for v in parsed.values()):
        return {str(k): v for k, v in parsed.items()}
    return {str(q.get("question", "")): answer for q in questions} or {"": answer}


def _request(frame: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    request = frame.get("request") if isinstance(frame.get("request"), dict) else {}
    assert isinstance(request, dict)
    raw_input = request.get("input")
    return request, raw_input if isinstance(raw_input, dict) else {}


def _allow(tool_input: dict[str, Any], profile: ClaudeFamilyProfile) -> dict[str, Any]:
    return (
        {"allowed": True, "updatedInput": tool_input}
        if profile.allowed_key
        else {
            "behavior": "allow",
            "updatedInput": tool_input,
        }
    )


def _deny(reason: str, interrupt: bool, profile: ClaudeFamilyProfile) -> dict[str, Any]:
    if profile.allowed_key:
        return {"allowed": False, "reason": reason, "interrupt": interrupt}
    body: dict[str, Any] = {"behavior": "deny", "message": reason}
    if interrupt:
        body["interrupt"] = True
    return body


def _reply(
    frame: dict[str, Any], request: dict[str, Any], body: dict[str, Any], profile: ClaudeFamilyProfile
) -> dict[str, Any]:
    if profile.allowed_key:
        body["tool_use_id"] = request.get("tool_use_id", "")
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": frame.get("request_id", ""), "response": body},
    }


def decision_response(frame: dict[str, Any], decision: Decision, profile: ClaudeFamilyProfile) -> dict[str, Any]:
    """The ``control_response`` line that gives ``decision`` back to the CLI."""
    request, tool_input = _request(frame)
    if decision.action == "approve":
        body = _allow(tool_input, profile)
    elif decision.action == "answer":
        body = _allow({**tool_input, "answers": _answers(tool_input, decision.answer)}, profile)
    else:
        reason = decision.reason or "The user denied this request."
        body = _deny(reason, decision.interrupt, profile)
    return _reply(frame, request, body, profile)


def allow_response(frame: dict[str, Any], profile: ClaudeFamilyProfile) -> dict[str, Any]:
    """The ``control_response`` that allows a request without asking (a host tool that needs no approval)."""
    request, tool_input = _request(frame)
    return _reply(frame, request, _allow(tool_input, profile), profile)


def cancelled_deny(frame: dict[str, Any], profile: ClaudeFamilyProfile) -> dict[str, Any]:
    """A deny, with interrupt, for a request nobody will answer any more (its run was cancelled)."""
    request, _ = _request(frame)
    return _reply(frame, request, _deny("the run that asked was cancelled", True, profile), profile)


def error_response(request_id: str, message: str) -> dict[str, Any]:
    """A ``control_response`` that refuses a control request the driver does not serve."""
    return {"type": "control_response", "response": {"subtype": "error", "request_id": request_id, "error": message}}


def mcp_response(request_id: str, reply: dict[str, Any]) -> dict[str, Any]:
    """The ``control_response`` that carries an in-process MCP server's JSON-RPC reply back to the CLI."""
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": {"mcp_response": reply}},
    }


def cancelled_reply(message_id: Any) -> dict[str, Any]:
    """The JSON-RPC error that ends a host-tool call whose run was cancelled (the MCP "request cancelled" code)."""
    return {"jsonrpc": "2.0", "id": message_id, "error": {"code": -32800, "message": "the run was cancelled"}}
