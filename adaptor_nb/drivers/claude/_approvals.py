"""Claude's ``can_use_tool`` requests as ApprovalSpecs, and decisions as the CLI's ``control_response`` lines."""

from __future__ import annotations

import json
from typing import Any

from ...driver import (
    ApprovalKind,
    ApprovalSpec,
    Choice,
    Decision,
)

PLAN_TOOL = "ExitPlanMode"
QUESTION_TOOL = "AskUserQuestion"


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


def approval_spec(frame: dict[str, Any]) -> ApprovalSpec:
    """The ApprovalSpec for one ``control_request`` of subtype ``can_use_tool``."""
    request = frame.get("request") if isinstance(frame.get("request"), dict) else {}
    assert isinstance(request, dict)
    tool = str(request.get("tool_name") or "")
    raw_input = request.get("input")
    tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
    tool_use_id = str(request.get("tool_use_id") or "")
    request_id = str(frame.get("request_id") or "")
    details: dict[str, Any] = {"tool_name": tool, "input": tool_input}
    for key in ("permission_suggestions", "blocked_path", "decision_reason", "decision_reason_type", "agent_id"):
        if key in request:
            details[key] = request[key]
    if tool == PLAN_TOOL:
        plan = tool_input.get("plan")
        details["plan"] = plan if isinstance(plan, str) else ""
        return ApprovalSpec(
            kind=ApprovalKind.PLAN_REVIEW,
            title="Review the plan",
            tool_call_id=tool_use_id,
            details=details,
            source="claude.exit_plan_mode",
            provider_request_id=request_id,
        )
    if tool == QUESTION_TOOL:
        questions = _questions(tool_input)
        details["questions"] = questions
        first = questions[0] if questions else {}
        title = str(first.get("question") or "Claude has a question")
        return ApprovalSpec(
            kind=ApprovalKind.QUESTION,
            title=title,
            tool_call_id=tool_use_id,
            choices=_options(first),
            details=details,
            source="claude.ask_user_question",
            provider_request_id=request_id,
        )
    name = str(request.get("display_name") or tool)
    summary = _summary(tool, request, tool_input)
    return ApprovalSpec(
        kind=ApprovalKind.PERMISSION,
        title=f"{name}: {summary}" if summary else name,
        tool_call_id=tool_use_id,
        details=details,
        source="claude.can_use_tool",
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


def decision_response(frame: dict[str, Any], decision: Decision) -> dict[str, Any]:
    """The ``control_response`` line that gives ``decision`` back to the CLI."""
    request = frame.get("request") if isinstance(frame.get("request"), dict) else {}
    assert isinstance(request, dict)
    raw_input = request.get("input")
    tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
    body: dict[str, Any]
    if decision.action == "approve":
        body = {"behavior": "allow", "updatedInput": tool_input}
    elif decision.action == "answer":
        body = {"behavior": "allow", "updatedInput": {**tool_input, "answers": _answers(tool_input, decision.answer)}}
    else:
        body = {"behavior": "deny", "message": decision.reason or "The user denied this request."}
        if decision.interrupt:
            body["interrupt"] = True
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": frame.get("request_id", ""), "response": body},
    }


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
