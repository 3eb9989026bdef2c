"""The checks, one function per contract clause (``_clauses.CLAUSES`` names it), and the CHECKS table the runner
walks."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from typing import Any

from adaptor_nb import (
    ApprovalDenied,
    ApprovalKind,
    ApprovalMode,
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalResolvedError,
    Author,
    AuthorKind,
    Event,
    FailureReason,
    FallbackAction,
    FeatureLevel,
    HumanDecisionModeUnsupportedError,
    MessageError,
    MessageFailure,
    MessageState,
    MessageUnsupportedError,
    Notice,
    NoticeKind,
    Policy,
    PolicyCapabilityUnsupportedError,
    QuestionMode,
    RunCancelled,
    RunError,
    RunFinishedError,
    SandboxLevel,
    StructuredOutputUnsupportedError,
    Timing,
    TurnEnd,
)
from adaptor_nb.driver import Boundary, Descriptor, MessageCapabilities

from ._audit import _audit
from ._cases import QUESTION_CHOICES, SCHEMA, STRUCTURED_VALUE, ModelRun
from ._contract_checks import check_config_stable, check_descriptor_truthful, check_observation_inspect
from ._harness import _Harness, _same_text, _success
from ._host_tools import check_host_tool_calls, check_host_tool_cancel, check_host_tool_errors
from ._profile_check import check_skills_and_profiles
from ._verdicts import _expect, _fail, _skip

# --- checks: events and results -----------------------------------------------------------------------------


async def check_event_ordering(h: _Harness) -> str | None:
    """RunStarted first, strictly increasing sequences, one run id, TurnEnd per turn, Done last with the result."""
    reply = "Conformance answer about event ordering."
    agent = await h.start(ModelRun(reply=reply))
    out = await h.run(agent.send(h.prompt(0)))
    result = _success(out, "a plain run")
    _expect(result.turns >= 1, f"a successful run reports {result.turns} turns; at least one is expected")
    _expect(bool(out.of(TurnEnd)), "no TurnEnd event was published")
    _same_text(result.text, reply, "a plain run")
    again = await out.stream.result()
    _expect(again is result, "result() is not repeatable: a second call returned another object")
    return f"{len(out.events)} events, {result.turns} turn(s)"


async def check_results(h: _Harness) -> str | None:
    """The Result carries text, turns, model, provider and usage (None only when unobserved)."""
    reply = "Conformance answer about results."
    agent = await h.start(ModelRun(reply=reply))
    out = await h.run(agent.send(h.prompt(0)))
    result = _success(out, "a plain run")
    _same_text(result.text, reply, "a plain run")
    _expect(result.turns >= 1, f"turns is {result.turns}; a successful run has at least one")
    _expect(isinstance(result.model, str), "result.model must be a str")
    _expect(bool(result.provider), "result.provider is empty")
    _expect(not result.undelivered(), "a run without supplemental messages reports undelivered messages")
    raw = result.raw()
    _expect(isinstance(raw.stdout, bytes) and isinstance(raw.stderr, bytes), "raw() streams must be bytes")
    _expect(isinstance(result.transcript(), list), "transcript() must be a list")
    return f"usage {'unobserved' if result.usage is None else 'observed'}"


# --- checks: policy -----------------------------------------------------------------------------------------


def _unsupported_policies(desc: Descriptor) -> list[tuple[str, Policy, type[Exception]]]:
    out: list[tuple[str, Policy, type[Exception]]] = []
    caps = desc.policy
    for level in SandboxLevel:
        if level.value and level not in caps.sandbox:
            out.append((f"sandbox={level.name}", Policy(sandbox=level), PolicyCapabilityUnsupportedError))
    for feature in FeatureLevel:
        if feature.value and feature not in caps.web_search:
            out.append((f"web_search={feature.name}", Policy(web_search=feature), PolicyCapabilityUnsupportedError))
        if feature.value and feature not in caps.browser:
            out.append((f"browser={feature.name}", Policy(browser=feature), PolicyCapabilityUnsupportedError))
    ac = desc.approvals
    for mode in ApprovalMode:
        if mode.value and mode not in ac.permission_modes:
            out.append(
                (
                    f"approvals.permission={mode.name}",
                    Policy(approvals=ApprovalPolicy(permission=mode)),
                    HumanDecisionModeUnsupportedError,
                )
            )
        if mode.value and mode not in ac.plan_review_modes:
            out.append(
                (
                    f"approvals.plan_review={mode.name}",
                    Policy(approvals=ApprovalPolicy(plan_review=mode)),
                    HumanDecisionModeUnsupportedError,
                )
            )
    for qmode in QuestionMode:
        if qmode.value and qmode not in ac.question_modes:
            out.append(
                (
                    f"approvals.question={qmode.name}",
                    Policy(approvals=ApprovalPolicy(question=qmode)),
                    HumanDecisionModeUnsupportedError,
                )
            )
    return out


async def check_policy_rejected(h: _Harness) -> str | None:
    """Explicit policy values the driver does not declare fail before launch with the matching error."""
    cases = _unsupported_policies(h.desc)
    if not cases:
        _skip("the driver declares every explicit policy value")
    agent = await h.start()
    for label, policy, error in cases:
        out = await h.run(agent.send(f"conformance: {label} must be rejected", policy=policy), launched=False)
        _expect(
            isinstance(out.error, error),
            f"policy {label} is not declared, so the run must fail with {error.__name__}; got {out.describe_error()}",
        )
        option = str(getattr(out.error, "option", ""))
        dimension = label.split("=")[0]
        _expect(dimension in option, f"the {error.__name__} for {label} names option {option!r}")
    return f"{len(cases)} undeclared value(s) rejected before launch"


def _policy_labels(policy: Policy) -> list[str]:
    a = policy.approvals
    pairs: list[tuple[str, SandboxLevel | FeatureLevel | ApprovalMode | QuestionMode]] = [
        ("sandbox", policy.sandbox),
        ("web_search", policy.web_search),
        ("browser", policy.browser),
        ("approvals.permission", a.permission),
        ("approvals.plan_review", a.plan_review),
        ("approvals.question", a.question),
    ]
    return [f"{k}={v.name}" for k, v in pairs if v.value]


def _pick(supported: frozenset[Any], order: Iterable[Any], default: Any) -> Any:
    for value in order:
        if value in supported:
            return value
    return default


async def check_policy_accepted(h: _Harness) -> str | None:
    """A run with declared explicit policy values starts and succeeds."""
    caps, ac = h.desc.policy, h.desc.approvals
    policy = Policy(
        sandbox=_pick(
            caps.sandbox,
            (SandboxLevel.READ_ONLY, SandboxLevel.WORKSPACE_WRITE, SandboxLevel.UNRESTRICTED),
            SandboxLevel.INHERIT,
        ),
        web_search=_pick(caps.web_search, (FeatureLevel.DENY, FeatureLevel.ALLOW), FeatureLevel.INHERIT),
        browser=_pick(caps.browser, (FeatureLevel.DENY, FeatureLevel.ALLOW), FeatureLevel.INHERIT),
        approvals=ApprovalPolicy(
            permission=_pick(ac.permission_modes, tuple(ApprovalMode)[1:], ApprovalMode.INHERIT),
            plan_review=_pick(ac.plan_review_modes, tuple(ApprovalMode)[1:], ApprovalMode.INHERIT),
            question=_pick(ac.question_modes, tuple(QuestionMode)[1:], QuestionMode.INHERIT),
        ),
    )
    if policy == Policy():
        _skip("the driver declares no explicit policy value")
    reply = "Conformance answer under a declared policy."
    agent = await h.start(ModelRun(reply=reply))
    out = await h.run(agent.send(h.prompt(0), policy=policy))
    result = _success(out, f"a run with declared policy {policy}")
    _same_text(result.text, reply, "a run with a declared policy")
    return "accepted " + ", ".join(_policy_labels(policy))


# --- checks: structured output ------------------------------------------------------------------------------


async def check_structured_output(h: _Harness) -> str | None:
    """Declared structured output (native or prompted) yields the validated value; none declared fails before launch."""
    so = h.desc.structured_output
    value = dict(STRUCTURED_VALUE)
    agent = await h.start(ModelRun(reply=json.dumps(value), structured=value), schema=SCHEMA)
    if not so.native and not so.prompted:
        out = await h.run(agent.send("conformance: structured output is not declared", schema=SCHEMA), launched=False)
        _expect(
            isinstance(out.error, StructuredOutputUnsupportedError),
            f"no structured output is declared, so a schema must fail with StructuredOutputUnsupportedError; "
            f"got {out.describe_error()}",
        )
        return "not declared: rejected before launch"
    out = await h.run(agent.send(h.prompt(0), schema=SCHEMA))
    mode = "native" if so.native else "prompted"
    result = _success(out, f"a {mode} structured run")
    _expect(result.structured == value, f"{mode} structured output is {result.structured!r}, expected {value!r}")
    decoded: dict[str, Any] = result.decode(dict)
    _expect(decoded == value, f"result.decode(dict) returned {decoded!r}, expected {value!r}")
    _expect(result.metadata.get("structured_output.valid") != "false", "the structured answer was marked invalid")
    return f"{mode} value validated"


# --- checks: supplemental messages --------------------------------------------------------------------------


def _timing_declared(caps: MessageCapabilities, timing: Timing) -> bool:
    if timing is Timing.SOON:
        return bool(caps.boundaries)
    if timing is Timing.AFTER_TURN:
        return Boundary.TURN_END in caps.boundaries
    return caps.interrupt


_SOON_BOUNDARIES = {Boundary.IN_RUN.value, Boundary.TURN_END.value}


def _expected_boundaries(caps: MessageCapabilities, timing: Timing) -> set[str]:
    if timing is Timing.SOON:
        return {b.value for b in caps.boundaries if b.value in _SOON_BOUNDARIES} | {Boundary.TURN_END.value}
    if timing is Timing.AFTER_TURN:
        return {Boundary.TURN_END.value}
    return {Boundary.INTERRUPT.value}


async def _check_timing(h: _Harness, timing: Timing) -> str | None:
    caps = h.desc.messages
    declared = _timing_declared(caps, timing)
    reply = f"Conformance answer while a {timing.name} message arrives."
    agent = await h.start(ModelRun(reply=reply, hold=True))
    stream = agent.send(h.prompt(0))
    watch = h.watch(stream)
    text = f"Conformance supplemental message sent with {timing.name}."
    mid = f"conformance-{timing.name.lower()}"
    admitted = False
    unsettled = ""
    try:
        await h.reach_hold(watch)
        try:
            got = await stream.send(text, id=mid, when=timing)
            admitted = True
            _expect(got == mid, f"send() returned id {got!r} for message {mid!r}")
            if timing is Timing.INTERRUPT:
                # The turn stays held: only an interrupt can end it before the model goes on.
                assert h.case is not None
                h.case.hold._interrupted()
                if not await h.settled(watch, mid, h.settings.timeout / 2):
                    unsettled = f" (it was still unsettled {h.settings.timeout / 2:g} s into the held turn)"
        except MessageUnsupportedError as exc:
            _expect(
                not declared, f"Timing.{timing.name} is declared but the message was rejected as unsupported: {exc}"
            )
            _expect(exc.text == text, f"MessageUnsupportedError must carry the original text, got {exc.text!r}")
        except MessageError as exc:
            _fail(f"the {timing.name} message was refused during a live run: {type(exc).__name__}: {exc}")
    finally:
        h.release()
    out = await watch.finish()
    _audit(out, texts={mid: text} if admitted else {})
    if not declared:
        _expect(not admitted, f"Timing.{timing.name} is not declared, yet the message was admitted instead of rejected")
        return "not declared: rejected with MessageUnsupportedError"
    _success(out, f"a run with a {timing.name} message")
    final = out.final
    assert final is not None
    (m,) = [o for o in final.messages() if o.id == mid]
    _expect(
        m.state is MessageState.DELIVERED,
        f"a {timing.name} message admitted during a held turn ended {m.state.name} ({m.reason.value}); "
        "a declared timing must be delivered",
    )
    allowed = _expected_boundaries(caps, timing)
    _expect(
        m.boundary in allowed,
        f"{timing.name} message delivered at {m.boundary!r}; expected one of {sorted(allowed)}{unsettled}",
    )
    if m.boundary == Boundary.IN_RUN.value:
        _expect(Boundary.IN_RUN in caps.boundaries, "a message was delivered in-run, which the driver does not declare")
    return f"delivered at {m.boundary} by {m.mechanism or 'an unnamed mechanism'} in turn {m.turn}"


async def check_messages_soon(h: _Harness) -> str | None:
    """Timing.SOON is admitted and delivered when a boundary is declared, else rejected as unsupported."""
    return await _check_timing(h, Timing.SOON)


async def check_messages_after_turn(h: _Harness) -> str | None:
    """Timing.AFTER_TURN is delivered at turn end when TURN_END is declared, else rejected as unsupported."""
    return await _check_timing(h, Timing.AFTER_TURN)


async def check_messages_interrupt(h: _Harness) -> str | None:
    """Timing.INTERRUPT is delivered by interrupting when declared, else rejected as unsupported."""
    return await _check_timing(h, Timing.INTERRUPT)


async def check_message_lifecycle(h: _Harness) -> str | None:
    """Several admitted messages all end delivered or failed, in admission order, agreeing with MessageUpdate."""
    caps = h.desc.messages
    if not caps.supported:
        _skip("the driver declares no message boundary")
    reply = "Conformance answer while several messages arrive."
    agent = await h.start(ModelRun(reply=reply, hold=True))
    stream = agent.send(h.prompt(0))
    watch = h.watch(stream)
    sent: dict[str, str] = {}
    plan: list[tuple[str, str, Timing, Author]] = []
    if caps.boundaries:
        plan.append(("conformance-life-1", "First conformance note.", Timing.SOON, Author()))
        plan.append(
            (
                "conformance-life-2",
                "Second conformance note, from a peer.",
                Timing.SOON,
                Author(kind=AuthorKind.AGENT, id="peer", name="Peer"),
            )
        )
    if Boundary.TURN_END in caps.boundaries:
        plan.append(("conformance-life-3", "Third conformance note, after the turn.", Timing.AFTER_TURN, Author()))
    if not plan:
        h.release()
        await watch.finish()
        _skip("the driver declares only interrupt delivery")
    try:
        await h.reach_hold(watch)
        for mid, text, timing, author in plan:
            got = await stream.send(text, id=mid, when=timing, author=author)
            _expect(got == mid, f"send() returned {got!r} for {mid!r}")
            sent[mid] = text
        first_id, first_text = plan[0][0], plan[0][1]
        again = await stream.send(first_text, id=first_id)
        _expect(again == first_id, "re-sending an admitted id must return the same id")
    finally:
        h.release()
    out = await watch.finish()
    _audit(out, texts=sent)
    result = _success(out, "a run with supplemental messages")
    ids = [m.id for m in result.messages()]
    _expect(ids == list(sent), f"result.messages() must list admitted messages in order: {ids} vs {list(sent)}")
    for m in result.messages():
        _expect(m.state is MessageState.DELIVERED, f"message {m.id!r} ended {m.state.name} in a healthy run")
    try:
        await stream.send("A message after the end.", id="conformance-late")
    except RunFinishedError as exc:
        _expect(exc.text == "A message after the end.", "RunFinishedError must carry the original text")
    except MessageError as exc:
        _fail(f"a message after the end must raise RunFinishedError, got {type(exc).__name__}: {exc}")
    else:
        _fail("a message sent after the run finished was admitted")
    return f"{len(sent)} message(s) delivered at " + ", ".join(sorted({m.boundary for m in result.messages()}))


# --- checks: approvals --------------------------------------------------------------------------------------


class _Approvals:
    """Answers approval requests of one expected kind exactly once and checks duplicates are refused."""

    def __init__(self, kind: ApprovalKind, *, deny: bool = False) -> None:
        self.kind = kind
        self.deny = deny
        self.seen: list[ApprovalRequest] = []

    def __call__(self, ev: Event) -> None:
        if not isinstance(ev, ApprovalRequest):
            return
        self.seen.append(ev)
        if ev.kind is not self.kind:
            ev.deny("unexpected kind in the conformance suite")
            _fail(f"expected a {self.kind.value} request, got {ev.kind.value}: {ev.title!r}")
        _expect(ev.state == "pending", f"a published approval request is {ev.state}, not pending")
        first: Callable[[], None]
        if self.deny:
            first = lambda: ev.deny("denied by the conformance suite")  # noqa: E731
        elif ev.kind is ApprovalKind.QUESTION:
            choice = ev.choices[0].key if ev.choices else QUESTION_CHOICES[0]
            first = lambda: ev.answer(choice)  # noqa: E731
        else:
            first = ev.approve
        first()
        for label, again in (("the same answer again", first), ("deny()", lambda: ev.deny("second answer"))):
            try:
                again()
            except ApprovalResolvedError:
                continue
            except Exception as exc:
                _fail(f"answering twice ({label}) raised {type(exc).__name__}, not ApprovalResolvedError")
            _fail(f"answering twice ({label}) was accepted; responses are exactly-once")


def _asking_policy(desc: Descriptor, kind: ApprovalKind, timeout: float) -> Policy:
    ac = desc.approvals
    if kind not in ac.kinds:
        _skip(f"the driver does not declare {kind.value} requests")
    if kind is ApprovalKind.QUESTION:
        if QuestionMode.ASK not in ac.question_modes:
            _skip("the driver cannot ask questions (QuestionMode.ASK is not declared)")
        approvals = ApprovalPolicy(question=QuestionMode.ASK)
    elif kind is ApprovalKind.PERMISSION:
        if ApprovalMode.ASK not in ac.permission_modes:
            _skip("the driver cannot ask for permission (ApprovalMode.ASK is not declared)")
        approvals = ApprovalPolicy(permission=ApprovalMode.ASK)
    else:
        if ApprovalMode.ASK not in ac.plan_review_modes:
            _skip("the driver cannot ask for plan review (ApprovalMode.ASK is not declared)")
        approvals = ApprovalPolicy(plan_review=ApprovalMode.ASK)
    return Policy(approvals=replace(approvals, timeout=timeout, on_reject=FallbackAction.ABORT))


async def _check_approval(h: _Harness, kind: ApprovalKind) -> str | None:
    policy = _asking_policy(h.desc, kind, h.settings.timeout)
    reply = f"Conformance answer after a {kind.value} request."
    choices = QUESTION_CHOICES if kind is ApprovalKind.QUESTION else ()
    agent = await h.start(ModelRun(reply=reply, approval=kind, choices=choices))
    answers = _Approvals(kind)
    out = await h.run(agent.send(h.prompt(0), policy=policy), answers)
    _expect(len(answers.seen) == 1, f"the model asked once, but {len(answers.seen)} approval request(s) arrived")
    req = answers.seen[0]
    _expect(req.run_id == out.stream.run_id, f"ApprovalRequest.run_id {req.run_id!r} is not the run's id")
    if choices:
        offered = {c.key for c in req.choices} | {c.label for c in req.choices}
        _expect(set(choices) <= offered, f"the question offers {sorted(offered)}; the model offered {list(choices)}")
    resolved = [
        n for n in out.of(Notice) if n.kind == NoticeKind.APPROVAL_RESOLVED.value and n.data.get("request_id") == req.id
    ]
    _expect(len(resolved) == 1, f"{len(resolved)} approval.resolved notices for {req.id}; expected exactly one")
    result = _success(out, f"a run with an approved {kind.value} request")
    _same_text(result.text, reply, f"a run with an approved {kind.value} request")
    return None


async def check_approval_permission(h: _Harness) -> str | None:
    """A permission request is published once, answered once, and a second answer raises ApprovalResolvedError."""
    return await _check_approval(h, ApprovalKind.PERMISSION)


async def check_approval_plan_review(h: _Harness) -> str | None:
    """A plan-review request is published once, answered once, and a second answer raises ApprovalResolvedError."""
    return await _check_approval(h, ApprovalKind.PLAN_REVIEW)


async def check_approval_question(h: _Harness) -> str | None:
    """A question carries its choices, is answered once, and a second answer raises ApprovalResolvedError."""
    return await _check_approval(h, ApprovalKind.QUESTION)


async def check_approval_denied(h: _Harness) -> str | None:
    """Denying a request under on_reject=ABORT ends the run with ApprovalDenied and a partial result."""
    kinds = h.desc.approvals.kinds
    kind = next(
        (k for k in (ApprovalKind.PERMISSION, ApprovalKind.PLAN_REVIEW, ApprovalKind.QUESTION) if k in kinds), None
    )
    if kind is None:
        _skip("the driver declares no approval kinds")
    policy = _asking_policy(h.desc, kind, h.settings.timeout)
    choices = QUESTION_CHOICES if kind is ApprovalKind.QUESTION else ()
    agent = await h.start(ModelRun(reply="This answer must not be reached.", approval=kind, choices=choices))
    answers = _Approvals(kind, deny=True)
    out = await h.run(agent.send(h.prompt(0), policy=policy), answers)
    _expect(len(answers.seen) == 1, f"{len(answers.seen)} approval request(s) arrived; expected one")
    _expect(
        isinstance(out.error, ApprovalDenied),
        f"a denied {kind.value} request under on_reject=ABORT must end in ApprovalDenied; got {out.describe_error()}",
    )
    assert isinstance(out.error, RunError)
    _expect(out.error.reason is FailureReason.APPROVAL_DENIED, f"RunError.reason is {out.error.reason}")
    _expect(out.error.result is not None, "the RunError carries no partial result")
    return f"denied a {kind.value} request"


# --- checks: checkpoints and cancellation -------------------------------------------------------------------


async def check_checkpoints(h: _Harness) -> str | None:
    """A healthy thread run saves a checkpoint; a failed run keeps it; the thread then continues."""
    if not h.desc.resume:
        _skip("the driver does not declare resume")
    key = "conformance-thread"
    agent = await h.start(
        ModelRun(reply="Conformance answer one."),
        ModelRun(reply="This run fails.", fail=True),
        ModelRun(reply="Conformance answer three."),
    )
    thread = agent.thread(key)
    _expect(await thread.checkpoint() is None, "a new thread already has a checkpoint")
    first = await h.run(thread.send(h.prompt(0)), thread_key=key)
    _same_text(_success(first, "the first thread run").text, "Conformance answer one.", "the first thread run")
    saved = await thread.checkpoint()
    _expect(saved is not None, "a healthy thread run saved no checkpoint although the driver declares resume")
    assert saved is not None
    _expect(bool(saved.session_id), "the checkpoint has an empty session id")
    _expect(saved.driver == h.driver_name, f"the checkpoint names driver {saved.driver!r}, not {h.driver_name!r}")
    second = await h.run(thread.send(h.prompt(1)), thread_key=key)
    _expect(
        isinstance(second.error, RunError),
        f"a run whose model request fails must end in a RunError; got {second.describe_error()}",
    )
    assert isinstance(second.error, RunError)
    _expect(second.error.result is not None, "the failed run's RunError carries no partial result")
    kept = await thread.checkpoint()
    _expect(
        kept is not None and kept.session_id == saved.session_id and kept.run_id == saved.run_id,
        f"a failed run replaced the healthy checkpoint: {saved} became {kept}",
    )
    third = await h.run(thread.send(h.prompt(2)), thread_key=key)
    _same_text(_success(third, "a thread run after a failure").text, "Conformance answer three.", "the third run")
    latest = await thread.checkpoint()
    _expect(latest is not None and bool(latest.session_id), "the run after the failure saved no checkpoint")
    return None


async def check_cancellation(h: _Harness) -> str | None:
    """Cancelling a live run ends it with RunCancelled, Done last, and pending input failed as cancelled."""
    agent = await h.start(ModelRun(reply="This answer must not be reached.", hold=True))
    stream = agent.send(h.prompt(0))
    watch = h.watch(stream)
    sent: dict[str, str] = {}
    try:
        await h.reach_hold(watch)
        boundaries = h.desc.messages.boundaries
        if boundaries:
            text = "A conformance note that may never arrive."
            when = Timing.AFTER_TURN if Boundary.TURN_END in boundaries else Timing.SOON
            await stream.send(text, id="conformance-cancel", when=when)
            sent["conformance-cancel"] = text
        stream.cancel()
        stream.cancel()
    finally:
        h.release()
    out = await watch.finish()
    _audit(out, texts=sent)
    _expect(isinstance(out.error, RunCancelled), f"a cancelled run must raise RunCancelled; got {out.describe_error()}")
    assert isinstance(out.error, RunCancelled)
    _expect(out.error.result is not None, "RunCancelled carries no partial result")
    final = out.error.result
    assert final is not None
    for m in final.messages():
        if m.state is MessageState.FAILED:
            _expect(m.reason is MessageFailure.CANCELLED, f"{m.id!r} failed with {m.reason.value}, not cancelled")
    return None


# --- the table the runner walks -----------------------------------------------------------------------------

CheckFn = Callable[[_Harness], Awaitable[str | None]]

CHECKS: dict[str, CheckFn] = {
    "descriptor_truthful": check_descriptor_truthful,
    "config_stable": check_config_stable,
    "event_ordering": check_event_ordering,
    "results": check_results,
    "policy_rejected": check_policy_rejected,
    "policy_accepted": check_policy_accepted,
    "structured_output": check_structured_output,
    "messages_soon": check_messages_soon,
    "messages_after_turn": check_messages_after_turn,
    "messages_interrupt": check_messages_interrupt,
    "message_lifecycle": check_message_lifecycle,
    "approval_permission": check_approval_permission,
    "approval_plan_review": check_approval_plan_review,
    "approval_question": check_approval_question,
    "approval_denied": check_approval_denied,
    "checkpoints": check_checkpoints,
    "cancellation": check_cancellation,
    "skills_profiles": check_skills_and_profiles,
    "host_tool_calls": check_host_tool_calls,
    "host_tool_errors": check_host_tool_errors,
    "host_tool_cancel": check_host_tool_cancel,
    "observation_inspect": check_observation_inspect,
}
"""Every check by name, each verifying one clause of the contract (``CLAUSES[name]``)."""
