"""Tool calls and every kind of approval, on the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adaptor_nb import (
    ApprovalDenied,
    ApprovalKind,
    ApprovalMode,
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalTimeout,
    FallbackAction,
    MessageState,
    Phase,
    Policy,
    QuestionMode,
    Timing,
    ToolCall,
    ToolResult,
)
from adaptor_nb.testing._anthropic import FakeAnthropicServer

from .helpers import drain, of

pytestmark = pytest.mark.claude


def touch(path: Path) -> str:
    cmd = {"command": f"touch {path}", "description": "create a file"}
    return f"[[tool Bash {json.dumps(cmd)}]]"


async def test_tool_call_streams_arguments_then_result(agent_factory, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    read = json.dumps({"file_path": str(workspace / "a.txt")})
    events, result, err = await drain(agent_factory().send(f"read [[tool Read {read}]] [[say done reading]]"))
    assert err is None and result is not None and result.text == "done reading"
    calls = of(events, ToolCall)
    assert next(c.phase for c in calls) is Phase.START
    assert any(c.phase is Phase.CONTENT and c.args_delta for c in calls)
    assert "".join(c.args_delta for c in calls if c.phase is Phase.CONTENT) == read
    end = [c for c in calls if c.phase is Phase.END]
    assert len(end) == 1 and end[0].name == "Read" and end[0].args == {"file_path": str(workspace / "a.txt")}
    results = of(events, ToolResult)
    assert len(results) == 1 and results[0].id == end[0].id and results[0].name == "Read"
    assert "alpha" in json.dumps(results[0].result) and not results[0].is_error


async def test_multi_step_tool_loop_follows_each_result(
    agent_factory, fake: FakeAnthropicServer, workspace: Path
) -> None:
    for name in ("one", "two"):
        (workspace / name).write_text(f"content of {name}\n")
    steps = " ".join(f"[[tool Read {json.dumps({'file_path': str(workspace / n)})}]]" for n in ("one", "two"))
    result = await agent_factory().send(f"read both {steps}").result()
    assert "content of two" in result.text
    reqs = fake.message_requests
    assert len(reqs) == 3
    assert [len(r.tool_results) for r in reqs] == [0, 1, 2]


async def test_permission_approved_by_the_handler_runs_the_tool(agent_factory, workspace: Path) -> None:
    seen: list[ApprovalRequest] = []

    def handler(req: ApprovalRequest) -> None:
        seen.append(req)
        req.approve()

    target = workspace / "approved.txt"
    result = await agent_factory(on_approval=handler).send(f"make it {touch(target)}").result()
    assert target.exists()
    assert len(seen) == 1 and seen[0].kind is ApprovalKind.PERMISSION
    assert seen[0].details["tool_name"] == "Bash" and seen[0].title.startswith("Bash")
    assert seen[0].tool_call_id
    assert "Done" in result.text


CONTINUE_ON_REJECT = Policy(approvals=ApprovalPolicy(on_reject=FallbackAction.CONTINUE))


async def test_permission_denied_tells_the_model_and_skips_the_tool(agent_factory, workspace: Path) -> None:
    target = workspace / "denied.txt"
    agent = agent_factory(on_approval=lambda r: r.deny("not today"), policy=CONTINUE_ON_REJECT)
    events, result, err = await drain(agent.send(f"make it {touch(target)}"))
    assert err is None and result is not None
    assert not target.exists()
    res = of(events, ToolResult)
    assert res and res[0].is_error and "not today" in json.dumps(res[0].result)


async def test_denial_aborts_the_run_by_default(agent_factory, workspace: Path) -> None:
    target = workspace / "never.txt"
    agent = agent_factory(on_approval=lambda r: r.deny("no"))
    thread = agent.thread("t")
    _events, _result, err = await drain(thread.send(f"make it {touch(target)}"))
    assert isinstance(err, ApprovalDenied) and "no" in err.message
    assert not target.exists()
    again = await thread.send("still there? [[say yes]]").result()
    assert again.text == "yes"


async def test_deny_with_interrupt_stops_the_run(agent_factory, workspace: Path) -> None:
    target = workspace / "never.txt"
    agent = agent_factory(on_approval=lambda r: r.deny("stop now", interrupt=True), policy=CONTINUE_ON_REJECT)
    thread = agent.thread("t")
    _events, _result, err = await drain(thread.send(f"make it {touch(target)}"))
    assert isinstance(err, ApprovalDenied) and "stop now" in err.message
    assert err.details["subtype"] == "error_during_execution"
    assert not target.exists()
    # The Thread's process was settled, so the conversation goes on.
    again = await thread.send("still there? [[say yes]]").result()
    assert again.text == "yes"


@pytest.mark.parametrize(("mode", "created"), [(ApprovalMode.AUTO_APPROVE, True), (ApprovalMode.AUTO_DENY, False)])
async def test_policy_modes_decide_without_a_human(agent_factory, workspace: Path, mode, created) -> None:
    target = workspace / f"{mode.value}.txt"
    policy = Policy(approvals=ApprovalPolicy(permission=mode))
    result = await agent_factory(policy=policy).send(f"make it {touch(target)}").result()
    assert target.exists() is created
    assert result.turns == 1


async def test_question_answer_goes_into_the_tool_input(agent_factory, make_config, fake: FakeAnthropicServer) -> None:
    questions = {
        "questions": [
            {
                "question": "Which color?",
                "header": "Color",
                "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}],
                "multiSelect": False,
            }
        ]
    }
    seen: list[ApprovalRequest] = []

    def handler(req: ApprovalRequest) -> None:
        seen.append(req)
        req.answer("Blue")

    policy = Policy(approvals=ApprovalPolicy(question=QuestionMode.ASK))
    # --bare offers only Bash, Edit and Read, so this run uses the full tool set.
    agent = agent_factory(make_config(bare=False), on_approval=handler, policy=policy)
    result = await agent.send(f"ask [[tool AskUserQuestion {json.dumps(questions)}]]").result()
    assert seen and seen[0].kind is ApprovalKind.QUESTION and seen[0].title == "Which color?"
    assert [c.key for c in seen[0].choices] == ["Red", "Blue"]
    assert '"Which color?"="Blue"' in result.text
    last = fake.message_requests[-1].tool_results[-1]
    assert "Blue" in json.dumps(last)


async def test_plan_review_for_exit_plan_mode(agent_factory, make_config) -> None:
    seen: list[ApprovalRequest] = []

    def handler(req: ApprovalRequest) -> None:
        seen.append(req)
        req.approve()

    agent = agent_factory(make_config(permission_mode="plan", bare=False), on_approval=handler)
    plan = json.dumps({"plan": "1. Read the code\n2. Fix the bug"})
    result = await agent.send(f"plan it [[tool ExitPlanMode {plan}]]").result()
    assert len(seen) == 1 and seen[0].kind is ApprovalKind.PLAN_REVIEW
    assert seen[0].details["plan"].startswith("1. Read the code")
    assert "Done" in result.text


async def test_interrupt_while_approval_pending_expires_it(agent_factory, workspace: Path) -> None:
    target = workspace / "pending.txt"
    agent = agent_factory()
    stream = agent.send(f"make it {touch(target)}")
    requests: list[ApprovalRequest] = []
    events = []
    async for ev in stream.events():
        events.append(ev)
        if isinstance(ev, ApprovalRequest):
            requests.append(ev)
            await stream.send("forget the file [[say forgotten]]", when=Timing.INTERRUPT, id="m-int")
    result = await stream.result()
    assert requests and requests[0].state == "expired"
    assert not target.exists()
    assert result.text == "forgotten"
    assert result.turns == 2
    [outcome] = result.messages()
    assert outcome.state is MessageState.DELIVERED and outcome.boundary == "interrupt"
    assert outcome.mechanism == "interrupt"


async def test_approval_timeout_aborts_by_default(agent_factory, workspace: Path) -> None:
    policy = Policy(approvals=ApprovalPolicy(timeout=0.3))
    agent = agent_factory(policy=policy, on_approval=lambda r: None)
    thread = agent.thread("slow-human")
    _events, _result, err = await drain(thread.send(f"make it {touch(workspace / 'late.txt')}"))
    assert isinstance(err, ApprovalTimeout)
    assert not (workspace / "late.txt").exists()
    again = await thread.send("next [[say next]]").result()
    assert again.text == "next"


async def test_approval_timeout_can_continue_as_a_denial(agent_factory, workspace: Path) -> None:
    policy = Policy(approvals=ApprovalPolicy(timeout=0.3, on_timeout=FallbackAction.CONTINUE))
    agent = agent_factory(policy=policy, on_approval=lambda r: None)
    events, result, err = await drain(agent.send(f"make it {touch(workspace / 'late.txt')}"))
    assert err is None and result is not None
    assert not (workspace / "late.txt").exists()
    assert of(events, ToolResult)[0].is_error
