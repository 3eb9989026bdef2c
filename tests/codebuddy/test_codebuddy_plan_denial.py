"""A denied plan on the real CodeBuddy Code CLI: the CLI writes no ``result`` after a refused ExitPlanMode, so the
driver ends the turn itself (ApprovalDenied under on_reject=abort, a finished turn when the denial continues) and a
Thread's healthy checkpoint is kept."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _support import drain

from adaptor_nb import (
    Agent,
    ApprovalDenied,
    ApprovalKind,
    ApprovalMode,
    ApprovalPolicy,
    ApprovalRequest,
    FallbackAction,
    Policy,
)
from adaptor_nb.testing import ChatReply, ChatRequest, ChatToolCall, FakeChatCompletionsServer
from adaptor_nb.threadstore import MemoryStore

from .conftest import DriverFactory

pytestmark = pytest.mark.codebuddy
_PLAN_FILE = re.compile(r"(/\S*?/\.codebuddy/plans/[\w.-]+\.md)")
_PLAN = "# Plan\n1. add x\n"


def planner(request: ChatRequest) -> ChatReply:
    """Write the plan file, then say a few words and ask to leave plan mode with ExitPlanMode."""
    done = len(request.tool_outputs)
    if done == 0:
        found = _PLAN_FILE.search("\n".join(request.texts("user")))
        if found is None:
            return ChatReply.text("no plan file named")
        return ChatReply.tool("Write", {"file_path": found.group(1), "content": _PLAN})
    if done == 1:
        return ChatReply(answer="my plan is ready", tools=(ChatToolCall("ExitPlanMode", "{}"),))
    return ChatReply.text("planning more")


def deny(req: ApprovalRequest) -> None:
    req.deny("not this plan")


async def test_a_denied_plan_ends_the_run_with_approval_denied_and_the_partial_text(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.responder = planner
    driver = make_driver(permission_mode="plan")
    async with Agent(driver, workspace=str(workspace), on_approval=deny) as agent:
        _, result, error = await drain(agent.send("plan it"))
    assert result is None and isinstance(error, ApprovalDenied)
    assert error.details["kind"] == ApprovalKind.PLAN_REVIEW.value
    assert error.details["denial_reason"] == "not this plan"
    assert error.result is not None and "my plan is ready" in error.result.text


async def test_a_plan_denied_by_policy_finishes_the_turn_with_its_text(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.responder = planner
    policy = Policy(approvals=ApprovalPolicy(plan_review=ApprovalMode.AUTO_DENY))
    async with Agent(make_driver(permission_mode="plan"), workspace=str(workspace), policy=policy) as agent:
        _, result, error = await drain(agent.send("plan it"))
    assert error is None and result is not None
    assert result.text == "my plan is ready"
    assert result.metadata["terminal_reason"] == "plan_denied"
    plan_results = [t for t in result.transcript() if t.kind == "result"]
    assert [t.subtype for t in plan_results] == ["plan_denied"]
    # the model was not asked again after the denial: the CLI stopped there, and so did the run
    assert len(fake.model_requests) == 2


async def test_a_denied_plan_keeps_the_threads_healthy_checkpoint(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    store = MemoryStore()
    policy = Policy(approvals=ApprovalPolicy(on_reject=FallbackAction.CONTINUE))
    driver = make_driver(permission_mode="plan")
    async with Agent(driver, workspace=str(workspace), thread_store=store, on_approval=deny, policy=policy) as agent:
        thread = agent.thread("planning")
        first = await thread.send("remember: the colour is teal [[say ok]]").result()
        fake.responder = planner
        _, denied, error = await drain(thread.send("plan it"))
        assert error is None and denied is not None and denied.metadata["terminal_reason"] == "plan_denied"
        fake.responder = None
        _, after, error = await drain(thread.send("colour? [[say teal]]"))
    assert error is None and after is not None and after.text == "teal"
    assert after.metadata["session_id"] == first.metadata["session_id"]
    assert "remember: the colour is teal" in "\n".join(fake.model_requests[-1].user_queries())
