"""Approvals on the real CodeBuddy Code CLI: permission (allow with the CLI's ``allowed`` reply), AskUserQuestion
with its choices and answer, and ExitPlanMode with the plan text read from the plan file the CLI had written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _support import drain, outcome

from adaptor_nb import (
    Agent,
    ApprovalExpiredError,
    ApprovalKind,
    ApprovalMode,
    ApprovalPolicy,
    ApprovalRequest,
    Policy,
    QuestionMode,
    RunCancelled,
)
from adaptor_nb.testing import ChatReply, ChatRequest, FakeChatCompletionsServer

from .conftest import DriverFactory

pytestmark = pytest.mark.codebuddy
_PLAN_FILE = re.compile(r"(/\S*?/\.codebuddy/plans/[\w.-]+\.md)")


async def test_a_permission_request_is_asked_and_the_approved_tool_runs(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    seen: list[ApprovalRequest] = []

    def approve(req: ApprovalRequest) -> None:
        seen.append(req)
        req.approve()

    fake.enqueue(ChatReply.tool("Bash", {"command": "touch asked.txt", "description": "make asked.txt"}))
    async with Agent(make_driver(), workspace=str(workspace), on_approval=approve) as agent:
        _, result, error = await drain(agent.send("make it"))
    assert error is None and result is not None
    assert [r.kind for r in seen] == [ApprovalKind.PERMISSION]
    assert seen[0].title == "Bash: touch asked.txt" and seen[0].tool_call_id
    assert (workspace / "asked.txt").exists()


async def test_a_question_carries_its_choices_and_the_answer_reaches_the_model(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    seen: list[ApprovalRequest] = []

    def answer(req: ApprovalRequest) -> None:
        seen.append(req)
        req.answer("blue")

    question = {
        "question": "Which color do you want?",
        "header": "Color",
        "options": [{"label": "red", "description": "warm"}, {"label": "blue", "description": "cool"}],
        "multiSelect": False,
    }
    fake.enqueue(ChatReply.tool("AskUserQuestion", {"questions": [question]}))
    policy = Policy(approvals=ApprovalPolicy(question=QuestionMode.ASK))
    async with Agent(make_driver(), workspace=str(workspace), on_approval=answer, policy=policy) as agent:
        _, result, error = await drain(agent.send("ask me"))
    assert error is None and result is not None
    assert [r.kind for r in seen] == [ApprovalKind.QUESTION]
    assert seen[0].title == "Which color do you want?"
    assert [c.key for c in seen[0].choices] == ["red", "blue"]
    assert "Which color do you want? → blue" in fake.model_requests[1].tool_outputs[-1]


async def test_plan_review_shows_the_plan_file_and_approval_lets_the_turn_go_on(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    seen: list[ApprovalRequest] = []

    def approve(req: ApprovalRequest) -> None:
        seen.append(req)
        req.approve()

    def planner(request: ChatRequest) -> ChatReply:
        done = len(request.tool_outputs)
        if done == 0:
            found = _PLAN_FILE.search("\n".join(request.texts("user")))
            assert found, "plan mode should name the plan file"
            return ChatReply.tool("Write", {"file_path": found.group(1), "content": "# Plan\n1. add x\n2. test x\n"})
        if done == 1:
            return ChatReply.tool("ExitPlanMode", {})
        return ChatReply.text("plan approved, starting")

    fake.responder = planner
    driver = make_driver(permission_mode="plan")
    async with Agent(driver, workspace=str(workspace), on_approval=approve) as agent:
        _, result, error = await drain(agent.send("plan it"))
    assert error is None and result is not None and result.text == "plan approved, starting"
    plans = [r for r in seen if r.kind is ApprovalKind.PLAN_REVIEW]
    assert len(plans) == 1 and plans[0].details["plan"] == "# Plan\n1. add x\n2. test x\n"
    assert "/.codebuddy/plans/" in plans[0].details["plan_path"]


async def test_a_pending_approval_is_expired_when_the_run_is_cancelled(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.enqueue(ChatReply.tool("Bash", {"command": "touch never.txt", "description": "make never.txt"}))
    policy = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.ASK, timeout=-1))
    async with Agent(make_driver(), workspace=str(workspace), policy=policy) as agent:
        stream = agent.send("make it")
        requests: list[ApprovalRequest] = []
        async for ev in stream.events():
            if isinstance(ev, ApprovalRequest) and not requests:
                requests.append(ev)
                stream.cancel()
        _, error = await outcome(stream)
    assert isinstance(error, RunCancelled)
    [request] = requests
    assert request.state == "expired"
    with pytest.raises(ApprovalExpiredError):
        request.approve()
    assert not (workspace / "never.txt").exists()
