"""The driver conformance suite passes on the reference driver, adapts to fewer capabilities, catches broken ones."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from functools import partial
from typing import Any

import pytest
from conformance_table import check_column

from adaptor_nb import ApprovalKind, ApprovalMode, Phase, QuestionMode, TextDelta, Usage
from adaptor_nb.driver import (
    ApprovalCapabilities,
    ApprovalSpec,
    Boundary,
    ContinueMode,
    Descriptor,
    DriverFailure,
    DriverOutcome,
    IdentityCodec,
    Invocation,
    MessageCapabilities,
    PolicyCapabilities,
    RunContext,
    StructuredOutputCapabilities,
)
from adaptor_nb.drivers import reference
from adaptor_nb.testing import CHECKS, ConformanceCase, ConformanceReport, ModelRun, run_driver_conformance

ALL = set(CHECKS)


async def conformance(factory: Any, **kw: Any) -> ConformanceReport:
    kw.setdefault("timeout", 20)
    return await run_driver_conformance(factory, raise_on_failure=False, **kw)


def verdicts(report: ConformanceReport) -> dict[str, str]:
    return {r.name: r.status for r in report.results}


def reason(report: ConformanceReport, name: str) -> str:
    return next(r.reason for r in report.results if r.name == name)


# --- the reference driver -----------------------------------------------------------------------------------


async def test_reference_driver_passes_every_check() -> None:
    report = await run_driver_conformance(reference.Driver)
    assert report.ok, str(report)
    assert set(report.passed) == ALL
    assert report.driver == "reference"
    assert "delivered at in_run" in reason(report, "messages_soon")
    assert "delivered at interrupt" in reason(report, "messages_interrupt")
    assert reason(report, "structured_output") == "native value validated"
    check_column(report, "reference")  # the committed clause table matches this run


async def test_reference_driver_passes_with_a_factory_that_takes_the_case() -> None:
    seen: list[str] = []

    def factory(case: ConformanceCase) -> reference.Driver:
        seen.append(case.check)
        return reference.Driver()

    report = await conformance(factory, checks=["event_ordering", "checkpoints"])
    assert report.ok, str(report)
    assert seen == ["descriptor", "event_ordering", "checkpoints"]


NO_INTERRUPT = MessageCapabilities(
    boundaries=frozenset({Boundary.IN_RUN, Boundary.TURN_END}), continue_mode=ContinueMode.IN_RUN
)
IN_RUN_ONLY = MessageCapabilities(boundaries=frozenset({Boundary.IN_RUN}), continue_mode=ContinueMode.IN_RUN)
TURN_END_ONLY = MessageCapabilities(boundaries=frozenset({Boundary.TURN_END}), continue_mode=ContinueMode.IN_RUN)
INTERRUPT_ONLY = MessageCapabilities(interrupt=True, continue_mode=ContinueMode.IN_RUN)


async def test_without_interrupt_interrupt_messages_must_be_rejected() -> None:
    report = await conformance(partial(reference.Driver, messages=NO_INTERRUPT))
    assert report.ok, str(report)
    assert reason(report, "messages_interrupt") == "not declared: rejected with MessageUnsupportedError"
    assert "delivered at in_run" in reason(report, "messages_soon")


async def test_without_a_turn_end_boundary_after_turn_messages_must_be_rejected() -> None:
    report = await conformance(partial(reference.Driver, messages=IN_RUN_ONLY))
    assert report.ok, str(report)
    assert reason(report, "messages_after_turn") == "not declared: rejected with MessageUnsupportedError"
    assert reason(report, "messages_interrupt") == "not declared: rejected with MessageUnsupportedError"
    assert reason(report, "message_lifecycle") == "2 message(s) delivered at in_run"


async def test_with_only_a_turn_end_boundary_soon_messages_arrive_at_turn_end() -> None:
    report = await conformance(partial(reference.Driver, messages=TURN_END_ONLY))
    assert report.ok, str(report)
    assert "delivered at turn_end" in reason(report, "messages_soon")
    assert reason(report, "message_lifecycle") == "3 message(s) delivered at turn_end"


async def test_with_only_interrupt_the_lifecycle_check_is_skipped_and_soon_is_rejected() -> None:
    report = await conformance(partial(reference.Driver, messages=INTERRUPT_ONLY))
    assert report.ok, str(report)
    assert reason(report, "messages_soon") == "not declared: rejected with MessageUnsupportedError"
    assert "delivered at interrupt" in reason(report, "messages_interrupt")
    assert verdicts(report)["message_lifecycle"] == "skip"


async def test_without_messages_every_timing_is_rejected() -> None:
    report = await conformance(partial(reference.Driver, messages=MessageCapabilities()))
    assert report.ok, str(report)
    for name in ("messages_soon", "messages_after_turn", "messages_interrupt"):
        assert reason(report, name) == "not declared: rejected with MessageUnsupportedError"
    assert verdicts(report)["message_lifecycle"] == "skip"
    assert reason(report, "message_lifecycle") == "the driver declares no message boundary"


async def test_without_native_structured_output_the_prompted_path_is_checked() -> None:
    report = await conformance(partial(reference.Driver, native_structured_output=False))
    assert report.ok, str(report)
    assert reason(report, "structured_output") == "prompted value validated"


async def test_without_resume_the_checkpoint_check_is_skipped() -> None:
    report = await conformance(partial(reference.Driver, resume=False, fork=False))
    assert report.ok, str(report)
    assert verdicts(report)["checkpoints"] == "skip"


class NarrowReference(reference.Driver):
    """A reference driver that declares less: permission requests only, no structured output, no policy values."""

    def descriptor(self) -> Descriptor:
        return replace(
            super().descriptor(),
            approvals=ApprovalCapabilities(
                kinds=frozenset({ApprovalKind.PERMISSION}),
                permission_modes=frozenset({ApprovalMode.ASK}),
                plan_review_modes=frozenset(),
                question_modes=frozenset(),
            ),
            policy=PolicyCapabilities(),
            structured_output=StructuredOutputCapabilities(native=False, prompted=False),
        )


async def test_a_driver_that_declares_less_is_checked_for_what_it_declares() -> None:
    report = await conformance(NarrowReference)
    assert report.ok, str(report)
    v = verdicts(report)
    assert v["approval_permission"] == "pass"
    assert v["approval_plan_review"] == "skip" and v["approval_question"] == "skip"
    assert v["policy_accepted"] == "pass"  # permission=ASK is still declared
    assert reason(report, "structured_output") == "not declared: rejected before launch"
    # 3 sandbox + 2 web search + 2 browser + 2 permission modes + 3 plan-review modes + 2 question modes
    assert reason(report, "policy_rejected") == "14 undeclared value(s) rejected before launch"


# --- a third-party style driver with its own fake model -----------------------------------------------------


class FakeModel:
    """Plays a conformance case the way a fake model server would: in a worker thread, waiting on the hold."""

    def __init__(self, case: ConformanceCase) -> None:
        self.case = case
        self.requests: list[str] = []

    def answer(self, run: ModelRun, prompt: str) -> str:
        self.requests.append(prompt)
        if run.hold:
            assert self.case.hold.wait(30), "the suite never released the hold"
        if run.structured is not None:
            return json.dumps(run.structured)
        return run.reply


_RUN = re.compile(r"^<conformance run (\d+)>")


class TurnByResumeDriver:
    """One provider turn per invocation; supplemental input continues through the core by resume."""

    session_codec = IdentityCodec()

    def __init__(self, model: FakeModel) -> None:
        self.model = model
        self.current: ModelRun | None = None

    @property
    def name(self) -> str:
        return "turn-by-resume"

    def descriptor(self) -> Descriptor:
        return Descriptor(
            name="turn-by-resume",
            provider="fake",
            messages=MessageCapabilities(boundaries=frozenset({Boundary.TURN_END}), continue_mode=ContinueMode.RESUME),
            approvals=ApprovalCapabilities(
                kinds=frozenset({ApprovalKind.PERMISSION}),
                permission_modes=frozenset({ApprovalMode.ASK, ApprovalMode.AUTO_DENY}),
                question_modes=frozenset({QuestionMode.AUTO_DENY}),
            ),
            structured_output=StructuredOutputCapabilities(native=False, prompted=True),
            resume=True,
        )

    def validate_config(self) -> None:
        return None

    def config_fingerprint(self) -> str:
        return "turn-by-resume-1"

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        found = _RUN.match(invocation.prompt)
        if found:
            self.current = self.model.case.runs[int(found.group(1))]
            run = self.current
        else:  # a continuation carrying supplemental input
            assert self.current is not None
            run = ModelRun(reply=self.current.follow_up)
        if run.fail:
            raise DriverFailure("the fake model answered HTTP 500", details={"stderr_tail": "HTTP 500\n"})
        if run.approval is not None:
            await ctx.approvals.request(
                ApprovalSpec(kind=run.approval, title="Run echo?", tool_call_id="tool-1", source="fake")
            )
        await ctx.emit(TextDelta(message_id="m1", phase=Phase.START))
        text = await asyncio.to_thread(self.model.answer, run, invocation.prompt)
        await ctx.emit(TextDelta(text=text, message_id="m1"))
        await ctx.emit(TextDelta(message_id="m1", phase=Phase.END))
        await ctx.turn_end(usage=Usage(input_tokens=3, output_tokens=2), text=text)
        session = invocation.resume.session_id if invocation.resume else uuid.uuid4().hex
        return DriverOutcome(text=text, model="fake-1", provider="fake", session_id=session)


def prompt_for(case: ConformanceCase, index: int) -> str:
    return f"<conformance run {index}> please answer: {case.runs[index].reply}"


@contextlib.asynccontextmanager
async def turn_by_resume(case: ConformanceCase) -> AsyncIterator[TurnByResumeDriver]:
    model = FakeModel(case)
    yield TurnByResumeDriver(model)
    assert all(_RUN.match(p) or "conformance" in p.lower() for p in model.requests), model.requests


async def test_a_driver_with_its_own_fake_model_runs_through_the_hooks() -> None:
    report = await conformance(turn_by_resume, prompt_for=prompt_for)
    assert report.ok, str(report)
    v = verdicts(report)
    assert v["approval_plan_review"] == "skip" and v["approval_question"] == "skip"
    assert v["checkpoints"] == "pass" and v["cancellation"] == "pass"
    assert reason(report, "messages_interrupt") == "not declared: rejected with MessageUnsupportedError"
    assert reason(report, "structured_output") == "prompted value validated"
    assert reason(report, "policy_accepted") == "accepted approvals.permission=ASK, approvals.question=AUTO_DENY"


async def test_core_continuation_by_resume_numbers_messages_in_the_turn_they_start() -> None:
    report = await conformance(turn_by_resume, prompt_for=prompt_for, checks=["messages_soon", "message_lifecycle"])
    assert report.ok, str(report)
    assert reason(report, "messages_soon") == "delivered at turn_end by resume in turn 2"
    assert reason(report, "message_lifecycle") == "3 message(s) delivered at turn_end"


# --- broken drivers are caught ------------------------------------------------------------------------------


class _Ctx:
    """A RunContext that forwards to the core's, with some members replaced."""

    def __init__(self, inner: RunContext, **overrides: Any) -> None:
        self._inner = inner
        self._overrides = overrides

    def __getattr__(self, name: str) -> Any:
        if name in self._overrides:
            return self._overrides[name]
        return getattr(self._inner, name)


class LiesAboutMessages(reference.Driver):
    """Declares every message boundary but never claims a message."""

    def __init__(self) -> None:
        super().__init__(messages=MessageCapabilities())

    def descriptor(self) -> Descriptor:
        every = replace(NO_INTERRUPT, interrupt=True)
        return replace(super().descriptor(), messages=every)


async def test_a_driver_that_never_delivers_declared_messages_fails() -> None:
    report = await conformance(LiesAboutMessages)
    v = verdicts(report)
    for name in ("messages_soon", "messages_after_turn", "messages_interrupt", "message_lifecycle"):
        assert v[name] == "fail", str(report)
    assert "ended FAILED (run_failed)" in reason(report, "messages_soon")
    assert v["event_ordering"] == "pass"


class SwallowsApprovalAborts(reference.Driver):
    """Turns the core's abort into a plain denial and carries on."""

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        port = ctx.approvals

        class Port:
            async def request(self, spec: ApprovalSpec) -> Any:
                try:
                    return await port.request(spec)
                except Exception:
                    from adaptor_nb import Decision

                    return Decision("deny", reason="swallowed")

            def withdraw(self, provider_request_id: str) -> None:
                port.withdraw(provider_request_id)

        return await super().run(invocation, _Ctx(ctx, approvals=Port()))  # type: ignore[arg-type]


async def test_a_driver_that_swallows_an_approval_abort_fails() -> None:
    report = await conformance(SwallowsApprovalAborts, checks=["approval_permission", "approval_denied"])
    assert verdicts(report) == {"approval_permission": "pass", "approval_denied": "fail"}
    assert "must end in ApprovalDenied" in reason(report, "approval_denied")


class ReportsAnotherValue(reference.Driver):
    """Reports a structured value that is valid but not what the model answered."""

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        outcome = await super().run(invocation, ctx)
        if outcome.has_structured:
            outcome.structured = {"title": "invented", "count": 1}
        return outcome


async def test_a_driver_that_invents_structured_output_fails() -> None:
    report = await conformance(ReportsAnotherValue, checks=["structured_output"])
    assert verdicts(report) == {"structured_output": "fail"}
    assert "invented" in reason(report, "structured_output")


class SkipsTurnEnd(reference.Driver):
    """Never reports a finished turn to the core."""

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        async def turn_end(**_: Any) -> bool:
            return True

        return await super().run(invocation, _Ctx(ctx, turn_end=turn_end))  # type: ignore[arg-type]


async def test_a_driver_that_reports_no_turns_fails_event_ordering() -> None:
    report = await conformance(SkipsTurnEnd, checks=["event_ordering", "results"])
    assert verdicts(report) == {"event_ordering": "fail", "results": "fail"}
    assert "TurnEnd" in reason(report, "event_ordering")


class IgnoresCancellation(reference.Driver):
    """Catches its cancellation and returns a normal answer."""

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        try:
            return await super().run(invocation, ctx)
        except asyncio.CancelledError:
            return DriverOutcome(text="I ignored the cancellation", provider="reference", session_id="x")


async def test_a_driver_that_ignores_cancellation_fails() -> None:
    report = await conformance(IgnoresCancellation, checks=["cancellation"])
    assert verdicts(report) == {"cancellation": "fail"}


class NeverAnswers(reference.Driver):
    """Waits forever (until cancelled)."""

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_a_hanging_driver_fails_within_the_check_timeout() -> None:
    report = await conformance(NeverAnswers, checks=["event_ordering"], timeout=0.5)
    assert verdicts(report) == {"event_ordering": "fail"}
    assert reason(report, "event_ordering") == "the check did not finish within 0.5 s"


class IgnoresTheHold(reference.Driver):
    """A scripted environment that does not pause where the case asks it to."""

    def __init__(self, case: ConformanceCase) -> None:
        super().__init__(scenario=reference.Scenario("An answer that never pauses."))


async def test_an_environment_that_ignores_the_hold_is_reported_clearly() -> None:
    def factory(case: ConformanceCase) -> Any:
        # Not a reference.Driver instance the suite would script: hide it behind a plain wrapper.
        return _Plain(IgnoresTheHold(case))

    report = await conformance(factory, checks=["messages_soon"])
    assert verdicts(report) == {"messages_soon": "fail"}
    assert "case.hold" in reason(report, "messages_soon")


class _Plain:
    def __init__(self, inner: reference.Driver) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


# --- the suite's own API ------------------------------------------------------------------------------------


async def test_failures_raise_an_assertion_error_listing_them() -> None:
    with pytest.raises(AssertionError, match=r"failed 1 conformance check\(s\):\n- structured_output: "):
        await run_driver_conformance(ReportsAnotherValue, checks=["structured_output", "results"], timeout=20)


async def test_checks_can_be_selected_and_skipped_with_reasons() -> None:
    report = await run_driver_conformance(
        reference.Driver, checks=["results", "checkpoints"], skip={"checkpoints": "covered elsewhere"}
    )
    assert [(r.name, r.status, r.reason) for r in report.results] == [
        ("results", "pass", "usage observed"),
        ("checkpoints", "skip", "covered elsewhere"),
    ]
    assert report.status("results") == "pass"
    assert "1 passed, 0 failed, 1 skipped" in str(report)


async def test_unknown_check_names_are_refused_before_anything_runs() -> None:
    made: list[int] = []

    def factory() -> reference.Driver:
        made.append(1)
        return reference.Driver()

    with pytest.raises(ValueError, match="unknown conformance check"):
        await run_driver_conformance(factory, checks=["event_order"])
    assert made == []


def test_every_check_has_a_one_sentence_docstring() -> None:
    for name, fn in CHECKS.items():
        assert fn.__doc__ and fn.__doc__.count(".") >= 1, name
