import asyncio
import threading

import pytest

from adaptor_nb import (
    Agent,
    ApprovalDenied,
    ApprovalExpiredError,
    ApprovalKind,
    ApprovalKindMismatchError,
    ApprovalMode,
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalResolvedError,
    ApprovalTimeout,
    ApprovalUnavailableError,
    FallbackAction,
    HumanDecisionModeUnsupportedError,
    InvalidPolicyError,
    Notice,
    Origin,
    Policy,
    PolicyCapabilityUnsupportedError,
    QuestionMode,
    SandboxLevel,
    ToolResult,
    approve_all,
    deny_all,
)
from adaptor_nb.driver import ApprovalCapabilities
from adaptor_nb.drivers import reference as ref

from .helpers import collect, of_type

TOOL = ref.Scenario(
    ref.Turn(ref.ToolUse("Bash", {"command": "rm -rf build"}, {"ok": True}, approval=ApprovalKind.PERMISSION), "after")
)


def ask_policy(**kw) -> Policy:  # type: ignore[no-untyped-def]
    return Policy(approvals=ApprovalPolicy(**kw))


async def first_request(stream) -> tuple[ApprovalRequest, list]:  # type: ignore[no-untyped-def]
    it = stream.events()
    seen = []
    async for ev in it:
        seen.append(ev)
        if isinstance(ev, ApprovalRequest):
            return ev, seen
    raise AssertionError("no approval request")


async def test_approve_through_events_runs_the_tool() -> None:
    stream = Agent(ref.Driver(scenario=TOOL)).send("go")
    events = []
    async for ev in stream.events():
        events.append(ev)
        if isinstance(ev, ApprovalRequest):
            assert ev.kind is ApprovalKind.PERMISSION and ev.details["tool"] == "Bash"
            assert ev.deadline is not None and ev.run_id == stream.run_id
            ev.approve()
    (res,) = of_type(events, ToolResult)
    assert res.result == {"ok": True} and not res.is_error
    assert (await stream).text == "after"
    resolved = [n for n in of_type(events, Notice) if n.kind == "approval.resolved"]
    assert resolved[0].data["outcome"] == "approved"


async def test_deny_aborts_by_default_with_approval_denied() -> None:
    stream = Agent(ref.Driver(scenario=TOOL)).send("go")
    req, _ = await first_request(stream)
    req.deny("not today")
    with pytest.raises(ApprovalDenied, match="not today") as info:
        await stream.result()
    assert info.value.result is not None


async def test_deny_with_continue_tells_the_agent_and_goes_on() -> None:
    stream = Agent(ref.Driver(scenario=TOOL)).send("go", policy=ask_policy(on_reject=FallbackAction.CONTINUE))
    events = []
    async for ev in stream.events():
        events.append(ev)
        if isinstance(ev, ApprovalRequest):
            ev.deny("no")
    (res,) = of_type(events, ToolResult)
    assert res.is_error and res.result == {"denied": "no"}
    assert (await stream).text == "after"


async def test_responses_are_exactly_once_including_copies() -> None:
    stream = Agent(ref.Driver(scenario=TOOL)).send("go")
    req, _ = await first_request(stream)
    copy = req.forward(Origin(member="m1", task="t1"))
    assert copy.origin == Origin("m1", "t1") and req.origin == Origin()
    copy.approve()
    with pytest.raises(ApprovalResolvedError):
        req.approve()
    with pytest.raises(ApprovalResolvedError):
        copy.deny("late")
    await stream


async def test_kind_mismatch_is_reported() -> None:
    stream = Agent(ref.Driver(scenario=TOOL)).send("go")
    req, _ = await first_request(stream)
    with pytest.raises(ApprovalKindMismatchError):
        req.answer("yes")
    req.approve()
    await stream


async def test_unbound_request_is_unavailable() -> None:
    with pytest.raises(ApprovalUnavailableError):
        ApprovalRequest(id="x").approve()


async def test_timeout_aborts_by_default_and_later_answers_are_expired() -> None:
    stream = Agent(ref.Driver(scenario=TOOL)).send("go", policy=ask_policy(timeout=0.05))
    req, _ = await first_request(stream)
    with pytest.raises(ApprovalTimeout):
        await stream.result()
    with pytest.raises(ApprovalExpiredError):
        req.approve()
    with pytest.raises(ApprovalResolvedError):  # expired also matches resolved
        req.approve()


async def test_timeout_with_continue_denies_and_goes_on() -> None:
    stream = Agent(ref.Driver(scenario=TOOL)).send(
        "go", policy=ask_policy(timeout=0.05, on_timeout=FallbackAction.CONTINUE)
    )
    events = await collect(stream)
    (res,) = of_type(events, ToolResult)
    assert res.is_error
    assert (await stream).text == "after"


async def test_timeout_with_retry_asks_again_then_aborts() -> None:
    stream = Agent(ref.Driver(scenario=TOOL)).send(
        "go", policy=ask_policy(timeout=0.02, on_timeout=FallbackAction.RETRY, max_retries=2)
    )
    events = await collect(stream)
    attempts = [e.attempt for e in of_type(events, ApprovalRequest)]
    assert attempts == [0, 1, 2]
    with pytest.raises(ApprovalTimeout):
        await stream.result()


async def test_negative_timeout_means_no_deadline() -> None:
    stream = Agent(ref.Driver(scenario=TOOL)).send("go", policy=ask_policy(timeout=-1))
    req, _ = await first_request(stream)
    assert req.deadline is None
    req.approve()
    await stream


async def test_handler_decides_without_events() -> None:
    seen: list[ApprovalRequest] = []

    def handler(req: ApprovalRequest) -> None:
        seen.append(req)
        req.approve()

    result = await Agent(ref.Driver(scenario=TOOL), on_approval=handler).send("go")
    assert result.text == "after" and len(seen) == 1


async def test_async_handler_is_awaited() -> None:
    async def handler(req: ApprovalRequest) -> None:
        await asyncio.sleep(0)
        req.deny("async no")

    with pytest.raises(ApprovalDenied, match="async no"):
        await Agent(ref.Driver(scenario=TOOL), on_approval=handler).send("go")


async def test_on_approval_none_per_call_restores_event_routing() -> None:
    agent = Agent(ref.Driver(scenario=TOOL), on_approval=deny_all())
    stream = agent.send("go", on_approval=None)
    req, _ = await first_request(stream)
    req.approve()
    assert (await stream).text == "after"


async def test_no_handler_and_result_first_applies_the_fallback_at_once_with_a_notice() -> None:
    stream = Agent(ref.Driver(scenario=TOOL)).send("go", policy=ask_policy(timeout=-1))
    with pytest.raises(ApprovalTimeout):
        await asyncio.wait_for(stream.result(), 5)
    events = await collect(stream)
    assert any(isinstance(e, Notice) and "no handler" in e.text for e in events)


class _AskedPort:
    """The run's approval port, seen through a driver that says when it asked (a user driver's view)."""

    def __init__(self, port, asked: asyncio.Event) -> None:  # type: ignore[no-untyped-def]
        self._port, self._asked = port, asked

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._port, name)

    async def request(self, spec):  # type: ignore[no-untyped-def]
        self._asked.set()  # the real request is published before its first await
        return await self._port.request(spec)


class _AskedContext:
    def __init__(self, ctx, asked: asyncio.Event) -> None:  # type: ignore[no-untyped-def]
        self._ctx, self.approvals = ctx, _AskedPort(ctx.approvals, asked)

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._ctx, name)


class _TellsWhenItAsks(ref.Driver):
    def __init__(self, asked: asyncio.Event, **kw) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kw)
        self.asked = asked

    async def run(self, invocation, ctx):  # type: ignore[no-untyped-def]
        return await super().run(invocation, _AskedContext(ctx, self.asked))


async def test_request_before_events_waits_for_the_subscriber() -> None:
    asked = asyncio.Event()
    stream = Agent(_TellsWhenItAsks(asked, scenario=TOOL)).send("go", policy=ask_policy(timeout=-1))
    await asked.wait()  # the request is raised before anyone subscribes
    req, _ = await first_request(stream)
    req.approve()
    assert (await stream).text == "after"


async def test_approve_all_and_deny_all() -> None:
    q = ref.Scenario(ref.Turn(ref.Ask("Which?", ("a", "b")), ref.ToolUse("X", approval=ApprovalKind.PERMISSION), "end"))
    pol = ask_policy(question=QuestionMode.ASK, on_reject=FallbackAction.CONTINUE)
    r = await Agent(ref.Driver(scenario=q), on_approval=approve_all()).send("go", policy=pol)
    stream = Agent(ref.Driver(scenario=q), on_approval=approve_all()).send("go", policy=pol)
    events = await collect(stream)
    results = of_type(events, ToolResult)
    assert results[0].is_error  # the question was denied
    assert not results[1].is_error  # the permission was approved
    assert r.text == "end"
    with pytest.raises(ApprovalDenied):
        await Agent(ref.Driver(scenario=q), on_approval=deny_all("nope")).send(
            "go", policy=ask_policy(question=QuestionMode.ASK)
        )


async def test_questions_are_auto_denied_by_default_and_answered_when_asked() -> None:
    q = ref.Scenario(ref.Turn(ref.Ask("Pick a colour", ("red", "blue")), "ok"))
    events = await collect(
        Agent(ref.Driver(scenario=q)).send("go", policy=ask_policy(on_reject=FallbackAction.CONTINUE))
    )
    assert not of_type(events, ApprovalRequest)
    assert of_type(events, ToolResult)[0].is_error

    stream = Agent(ref.Driver(scenario=q)).send("go", policy=ask_policy(question=QuestionMode.ASK))
    out = []
    async for ev in stream.events():
        out.append(ev)
        if isinstance(ev, ApprovalRequest):
            assert [c.key for c in ev.choices] == ["red", "blue"]
            with pytest.raises(ApprovalKindMismatchError):
                ev.approve()
            ev.answer("blue")
    assert of_type(out, ToolResult)[0].result == {"answer": "blue"}


async def test_plan_review_auto_approve() -> None:
    sc = ref.Scenario(ref.Turn(ref.PlanReview("1. read 2. write"), "planned"))
    result = await Agent(ref.Driver(scenario=sc)).send("go", policy=ask_policy(plan_review=ApprovalMode.AUTO_APPROVE))
    assert result.text == "planned"


async def test_auto_deny_policy_never_asks() -> None:
    stream = Agent(ref.Driver(scenario=TOOL)).send(
        "go", policy=ask_policy(permission=ApprovalMode.AUTO_DENY, on_reject=FallbackAction.ABORT)
    )
    events = await collect(stream)
    assert not of_type(events, ApprovalRequest)
    assert of_type(events, ToolResult)[0].is_error


async def test_answer_from_another_thread() -> None:
    stream = Agent(ref.Driver(scenario=TOOL)).send("go")
    req, _ = await first_request(stream)
    errors: list[BaseException] = []

    def click() -> None:
        try:
            req.approve()
            req.approve()
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=click)
    t.start()
    t.join()
    assert len(errors) == 1 and isinstance(errors[0], ApprovalResolvedError)
    assert (await stream).text == "after"


async def test_cancel_unblocks_an_approval_wait() -> None:
    stream = Agent(ref.Driver(scenario=TOOL)).send("go", policy=ask_policy(timeout=-1))
    req, _ = await first_request(stream)
    stream.cancel()
    from adaptor_nb import RunCancelled

    with pytest.raises(RunCancelled):
        await asyncio.wait_for(stream.result(), 5)
    with pytest.raises(ApprovalExpiredError):
        req.approve()


async def test_policy_checked_against_the_descriptor_before_launch() -> None:
    agent = Agent(ref.Driver())
    with pytest.raises(PolicyCapabilityUnsupportedError) as info:
        await agent.send("go", policy=Policy(sandbox=SandboxLevel.UNRESTRICTED))
    assert info.value.option == "policy.sandbox"
    await agent.send("go", policy=Policy(sandbox=SandboxLevel.READ_ONLY))

    narrow = ref.Driver()
    narrow_desc = narrow.descriptor()
    import dataclasses

    class Narrow(ref.Driver):
        def descriptor(self):  # type: ignore[no-untyped-def]
            return dataclasses.replace(
                narrow_desc,
                approvals=ApprovalCapabilities(
                    kinds=frozenset({ApprovalKind.PERMISSION}),
                    permission_modes=frozenset({ApprovalMode.ASK}),
                    question_modes=frozenset({QuestionMode.AUTO_DENY}),
                ),
            )

    with pytest.raises(HumanDecisionModeUnsupportedError) as info2:
        await Agent(Narrow()).send("go", policy=ask_policy(permission=ApprovalMode.AUTO_APPROVE))
    assert info2.value.option == "policy.approvals.permission"
    with pytest.raises(InvalidPolicyError):
        await agent.send("go", policy=ask_policy(max_retries=-1))
