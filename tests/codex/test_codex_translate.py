"""Event mapping and approval mapping, replayed from app-server output recorded with the real CLI
(``tests/fixtures/codex``, made by ``tests/codex/record_fixtures.py``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from adaptor_nb import Decision, Notice, Phase, TextDelta, Thinking, ToolCall, ToolResult
from adaptor_nb._events import Event
from adaptor_nb._result import TranscriptItem, Usage
from adaptor_nb.drivers.codex._approvals import (
    COMMAND_APPROVAL,
    ELICITATION_REQUEST,
    FILE_APPROVAL,
    PERMISSIONS_APPROVAL,
    approval_answer,
    approval_spec,
    declined_question,
    is_approval,
)
from adaptor_nb.drivers.codex._translate import TurnMapper

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "codex"


def replay(name: str) -> tuple[TurnMapper, list[Event | TranscriptItem], list[dict[str, Any]]]:
    """Feed a recorded run to a mapper the way the driver does; returns it, its outputs and the server requests."""
    mapper = TurnMapper()
    outputs: list[Event | TranscriptItem] = []
    requests: list[dict[str, Any]] = []
    for line in (FIXTURES / f"{name}.jsonl").read_text().splitlines():
        msg = json.loads(line)
        method, params = msg.get("method"), msg.get("params") or {}
        if method is None:
            continue
        if "id" in msg:
            requests.append(msg)
        elif method == "turn/started":
            mapper.begin_turn(params["turn"]["id"])
        elif method == "turn/completed":
            outputs.append(Notice(kind="test.turn_completed", data=params["turn"]))
        else:
            outputs.extend(mapper.map(method, params))
    return mapper, outputs, requests


def kinds(outputs: Sequence[Event | TranscriptItem]) -> list[str]:
    out = []
    for o in outputs:
        phase = getattr(o, "phase", None)
        out.append(type(o).__name__ + (f".{phase.name}" if isinstance(phase, Phase) else ""))
    return out


def test_reasoning_and_text_map_to_thinking_and_text_deltas() -> None:
    mapper, outputs, _ = replay("text_and_reasoning")
    events = [o for o in outputs if isinstance(o, Thinking | TextDelta)]
    assert kinds(events)[:3] == ["Thinking.START", "Thinking.CONTENT", "Thinking.END"]
    assert kinds(events)[3] == "TextDelta.START" and kinds(events)[-1] == "TextDelta.END"
    assert "".join(e.text for e in events if isinstance(e, Thinking)) == "planning a greeting"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "hello there, friend"
    assert mapper.state.text == "hello there, friend"
    assert mapper.state.usage == Usage(input_tokens=20, output_tokens=5)
    transcript = [o for o in outputs if isinstance(o, TranscriptItem)]
    assert [(t.kind, t.text) for t in transcript] == [
        ("thinking", "planning a greeting"),
        ("text", "hello there, friend"),
    ]


def test_a_command_maps_to_tool_call_output_deltas_and_result() -> None:
    mapper, outputs, _ = replay("command")
    calls = [o for o in outputs if isinstance(o, ToolCall)]
    assert [c.phase for c in calls[:2]] == [Phase.START, Phase.END]
    assert calls[0].name == "exec_command"
    assert calls[0].args is not None and "exit 3" in calls[0].args["command"]
    assert all(c.phase is Phase.CONTENT for c in calls[2:]) and calls[2:]
    (result,) = [o for o in outputs if isinstance(o, ToolResult)]
    assert result.id == calls[0].id
    assert (result.result["status"], result.result["exit_code"], result.is_error) == ("failed", 3, True)
    assert mapper.state.usage == Usage(input_tokens=40, output_tokens=10)  # two model requests in the turn


def test_a_file_change_maps_to_apply_patch_and_its_approval_names_the_file() -> None:
    mapper, outputs, requests = replay("patch_approved")
    start = next(o for o in outputs if isinstance(o, ToolCall))
    assert start.name == "apply_patch"
    assert start.args == {"changes": [{"path": "/ws/a.txt", "kind": "add", "diff": "alpha\n"}]}
    (request,) = requests
    spec = approval_spec(request["method"], request["id"], request["params"], mapper.tools)
    assert spec.title == "Apply changes to /ws/a.txt"
    assert spec.tool_call_id == start.id
    assert spec.provider_request_id == "0"
    (result,) = [o for o in outputs if isinstance(o, ToolResult)]
    assert result.result == {"status": "completed", "paths": ["/ws/a.txt"]}
    diffs = [o for o in outputs if isinstance(o, Notice) and o.metadata.get("code") == "codex_turn_diff"]
    assert diffs and "+alpha" in diffs[0].data["diff"]


def test_a_plan_update_maps_to_a_plan_notice() -> None:
    _, outputs, _ = replay("plan")
    (plan,) = [o for o in outputs if isinstance(o, Notice) and o.kind == "plan"]
    assert plan.text == "[x] a\n[ ] b"
    assert plan.data["plan"] == [{"step": "a", "status": "completed"}, {"step": "b", "status": "pending"}]


def test_a_failed_turn_keeps_the_error_for_the_run() -> None:
    mapper, outputs, _ = replay("http500")
    (completed,) = [o for o in outputs if isinstance(o, Notice) and o.kind == "test.turn_completed"]
    assert completed.data["status"] == "failed"
    assert mapper.state.error is not None and mapper.state.error["codexErrorInfo"] == "internalServerError"


def test_usage_of_other_turns_is_ignored() -> None:
    mapper = TurnMapper()
    mapper.begin_turn("t2")
    usage = {"total": {}, "last": {"inputTokens": 9, "outputTokens": 1, "cachedInputTokens": 0}}
    mapper.map("thread/tokenUsage/updated", {"turnId": "t1", "tokenUsage": usage})
    assert mapper.state.usage is None
    mapper.map("thread/tokenUsage/updated", {"turnId": "t2", "tokenUsage": usage})
    assert mapper.state.usage == Usage(input_tokens=9, output_tokens=1)


def test_a_message_that_was_never_streamed_is_emitted_whole() -> None:
    mapper = TurnMapper()
    out = mapper.map("item/completed", {"item": {"type": "agentMessage", "id": "m1", "text": "all at once"}})
    assert [(type(o).__name__, getattr(o, "text", "")) for o in out[:2]] == [("TextDelta", "all at once"),
                                                                            ("TextDelta", "")]  # fmt: skip


def test_retried_errors_and_warnings_become_notices() -> None:
    mapper = TurnMapper()
    mapper.begin_turn("t")
    (retry,) = mapper.map("error", {"turnId": "t", "willRetry": True, "error": {"message": "reconnecting 1/5"}})
    assert isinstance(retry, Notice) and retry.metadata["code"] == "codex_retry"
    assert mapper.state.error is None
    (warning,) = mapper.map("configWarning", {"summary": "bubblewrap not found"})
    assert isinstance(warning, Notice) and warning.text == "bubblewrap not found"


COMMAND_PARAMS = {
    "itemId": "call_1",
    "command": "/bin/bash -lc 'touch x'",
    "proposedExecpolicyAmendment": ["touch", "x"],
    "availableDecisions": ["accept", {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["touch", "x"]}}],
}


def test_decisions_map_to_app_server_answers() -> None:
    def answer(decision: Decision, method: str = COMMAND_APPROVAL) -> Any:
        return approval_answer(method, COMMAND_PARAMS, decision)

    assert answer(Decision("approve")) == {"decision": "accept"}
    assert answer(Decision("approve", answer="acceptForSession")) == {"decision": "acceptForSession"}
    assert answer(Decision("approve", answer="acceptWithExecpolicyAmendment")) == {
        "decision": {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["touch", "x"]}}
    }
    assert answer(Decision("deny")) == {"decision": "decline"}
    assert answer(Decision("deny", interrupt=True)) == {"decision": "cancel"}
    assert answer(Decision("approve"), FILE_APPROVAL) == {"decision": "accept"}
    assert answer(Decision("deny", interrupt=True), FILE_APPROVAL) == {"decision": "cancel"}
    assert answer(Decision("approve"), "execCommandApproval") == {"decision": "approved"}
    assert answer(Decision("deny"), "applyPatchApproval") == {"decision": "denied"}


def test_permission_requests_grant_what_was_asked_or_nothing() -> None:
    params = {"itemId": "i", "permissions": {"network": {"enabled": True}}}
    spec = approval_spec(PERMISSIONS_APPROVAL, 3, params, {})
    assert spec.title == "Grant additional permissions"
    grant = approval_answer(PERMISSIONS_APPROVAL, params, Decision("approve"))
    assert grant == {"permissions": {"network": {"enabled": True}}, "scope": "turn"}
    assert approval_answer(PERMISSIONS_APPROVAL, params, Decision("deny")) == {"permissions": {}}


def test_questions_are_declined() -> None:
    assert declined_question("item/tool/requestUserInput", {}) == {"answers": {}}
    assert declined_question("mcpServer/elicitation/request", {}) == {"action": "decline", "content": None}


def test_mcp_tool_approvals_are_permission_requests_and_other_elicitations_are_not() -> None:
    meta = {"codex_approval_kind": "mcp_tool_call", "tool_name": "echo", "tool_params": {"text": "hi"}}
    params = {"serverName": "echo", "message": 'Allow the echo MCP server to run tool "echo"?', "_meta": meta}
    assert is_approval(ELICITATION_REQUEST, params)
    assert not is_approval(ELICITATION_REQUEST, {"serverName": "echo", "message": "Your name?", "mode": "form"})
    spec = approval_spec(ELICITATION_REQUEST, 4, params, {})
    assert (spec.title, spec.source, spec.details["arguments"]) == (
        params["message"],
        "mcp__echo__echo",
        {"text": "hi"},
    )
    assert approval_answer(ELICITATION_REQUEST, params, Decision("approve")) == {"action": "accept", "content": {}}
    assert approval_answer(ELICITATION_REQUEST, params, Decision("deny"))["action"] == "decline"
    assert approval_answer(ELICITATION_REQUEST, params, Decision("deny", interrupt=True))["action"] == "cancel"
