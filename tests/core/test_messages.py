import asyncio
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adaptor_nb import (
    Agent,
    Author,
    AuthorKind,
    MessageError,
    MessageFailure,
    MessagePolicy,
    MessageState,
    MessageUnsupportedError,
    MessageUpdate,
    Notice,
    Policy,
    RunCancelled,
    RunFinishedError,
    Timing,
    TurnEnd,
)
from adaptor_nb.driver import Boundary, ContinueMode, MessageCapabilities
from adaptor_nb.drivers import reference as ref

from .helpers import collect, of_type


def gated(*after: ref.Turn | str) -> tuple[ref.Gate, ref.Driver]:
    gate = ref.Gate()
    return gate, ref.Driver(scenario=ref.Scenario(ref.Turn("working ", gate, "done"), *after))


async def test_admission_is_not_delivery_and_outcomes_are_in_admission_order() -> None:
    gate, driver = gated()
    stream = Agent(driver).send("task")
    await gate.reached.wait()
    ids = [await stream.send(f"note {i}", id=f"m{i}") for i in range(3)]
    gate.open()
    events = await collect(stream)
    result = await stream.result()
    assert [m.id for m in result.messages()] == ids
    assert all(m.state is MessageState.DELIVERED for m in result.messages())
    assert [m.text for m in result.messages()] == ["note 0", "note 1", "note 2"]
    updates = of_type(events, MessageUpdate)
    assert [u.state for u in updates if u.id == "m0"] == [MessageState.ACCEPTED, MessageState.DELIVERED]
    delivered = [m for m in result.messages()]
    assert delivered[0].boundary == "in_run" and delivered[0].mechanism == "in_run"


async def test_after_turn_message_is_delivered_at_turn_end_and_starts_a_turn() -> None:
    gate, driver = gated("second answer")
    stream = Agent(driver).send("task")
    await gate.reached.wait()
    await stream.send("follow up", id="a1", when=Timing.AFTER_TURN)
    gate.open()
    events = await collect(stream)
    result = await stream.result()
    (m,) = result.messages()
    assert m.state is MessageState.DELIVERED and m.boundary == "turn_end" and m.turn == 2
    ends = of_type(events, TurnEnd)
    assert [e.turn for e in ends] == [1, 2]
    assert ends[1].message_ids == ("a1",)
    assert result.turns == 2 and result.text == "second answer"


async def test_interrupt_delivers_through_the_interrupt_boundary() -> None:
    gate, driver = gated("answer after interrupt")
    stream = Agent(driver).send("task")
    await gate.reached.wait()
    await stream.send("stop and do this", when=Timing.INTERRUPT, id="i1")
    gate.open()
    result = await stream.result()
    (m,) = result.messages()
    assert m.state is MessageState.DELIVERED and m.boundary == "interrupt" and m.mechanism == "interrupt"


async def test_unsupported_timings_are_rejected_with_the_original_text() -> None:
    caps = MessageCapabilities(boundaries=frozenset({Boundary.TURN_END}), continue_mode=ContinueMode.IN_RUN)
    gate, _ = gated()
    driver = ref.Driver(scenario=ref.Scenario(ref.Turn(gate)), messages=caps)
    stream = Agent(driver).send("task")
    await gate.reached.wait()
    with pytest.raises(MessageUnsupportedError) as info:
        await stream.send("now!", when=Timing.INTERRUPT, id="x")
    assert info.value.text == "now!" and info.value.id == "x"
    gate.open()
    await stream


async def test_disabled_messages_reject_sends_but_the_prompt_runs() -> None:
    stream = Agent(ref.Driver()).send("task", policy=Policy(messages=MessagePolicy(disabled=True)))
    with pytest.raises(MessageUnsupportedError, match="disabled"):
        await stream.send("more")
    assert "task" in (await stream).text


async def test_send_after_the_run_finished_fails() -> None:
    stream = Agent(ref.Driver()).send("task")
    await stream
    with pytest.raises(RunFinishedError) as info:
        await stream.send("late", id="late-1")
    assert info.value.text == "late"


async def test_framing_is_author_aware_and_the_prompt_is_unframed() -> None:
    seen: list[str] = []

    class Spy(ref.Driver):
        async def run(self, invocation, ctx):  # type: ignore[no-untyped-def]
            seen.append(invocation.prompt)
            assert ctx.messages is not None
            await ctx.messages.wait()
            for m in ctx.messages.claim(Boundary.IN_RUN):
                seen.append(m.text)
                ctx.messages.delivered(m, boundary=Boundary.IN_RUN, mechanism="spy")
            return await super().run(invocation, ctx)

    agent = Agent(Spy())
    stream = agent.send("the task")
    await stream.send("from a human", author=Author(AuthorKind.HUMAN, id="rev", name="Ana"))
    await stream
    assert seen[0] == "the task"
    assert "from a human" in seen[1] and "Ana" in seen[1] and "one final answer" in seen[1]

    stream = agent.send("t2")
    await stream.send("peer says", author=Author(AuthorKind.AGENT, id="bot"))
    await stream
    assert "another agent" in seen[-1] and "peer says" in seen[-1]


async def test_custom_format_replaces_framing() -> None:
    texts: list[str] = []

    class Spy(ref.Driver):
        async def run(self, invocation, ctx):  # type: ignore[no-untyped-def]
            await ctx.messages.wait()
            for m in ctx.messages.claim(Boundary.IN_RUN):
                texts.append(m.text)
                ctx.messages.delivered(m, boundary=Boundary.IN_RUN, mechanism="spy")
            return await super().run(invocation, ctx)

    policy = Policy(messages=MessagePolicy(format=lambda c: f"<<{c.text}|{c.id}>>"))
    stream = Agent(Spy()).send("t", policy=policy)
    await stream.send("hey", id="q")
    await stream
    assert texts == ["<<hey|q>>"]


async def test_duplicate_message_id_is_idempotent_within_a_run() -> None:
    gate, driver = gated()
    stream = Agent(driver).send("task")
    await gate.reached.wait()
    await stream.send("once", id="same")
    await stream.send("once", id="same")
    gate.open()
    result = await stream.result()
    assert [m.id for m in result.messages()] == ["same"]


async def test_delivered_ids_are_deduplicated_across_runs_of_a_thread() -> None:
    gate1, gate2 = ref.Gate(), ref.Gate()
    agent = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("a", gate1))))
    th = agent.thread("dedupe")
    s1 = th.send("first")
    await gate1.reached.wait()
    await s1.send("guidance", id="g-1")
    gate1.open()
    await s1
    agent2 = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("b", gate2))), thread_store=agent.store)
    s2 = agent2.thread("dedupe").send("second")
    await gate2.reached.wait()
    await s2.send("guidance", id="g-1")
    gate2.open()
    r2 = await s2
    (m,) = r2.messages()
    assert m.state is MessageState.DELIVERED and m.mechanism == "deduplicated"


async def test_duplicate_starting_prompt_completes_with_zero_turns() -> None:
    agent = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(ref.WaitForMessage(), "x"))))
    th = agent.thread("k")
    s = th.send("go")
    await s.send("m", id="dup-prompt")
    await s
    again = await th.send("m", id="dup-prompt")
    assert again.turns == 0 and again.text == ""


async def test_max_pending_blocks_until_the_driver_claims() -> None:
    gate, gate2 = ref.Gate(), ref.Gate()
    driver = ref.Driver(scenario=ref.Scenario(ref.Turn("working ", gate, "mid ", gate2, "done")))
    stream = Agent(driver).send("t", policy=Policy(messages=MessagePolicy(max_pending=2)))
    await gate.reached.wait()
    await stream.send("1")
    await stream.send("2")
    third = asyncio.ensure_future(stream.send("3"))
    await asyncio.sleep(0)
    assert not third.done()
    gate.open()
    await third
    gate2.open()
    result = await stream.result()
    assert [m.text for m in result.messages()] == ["1", "2", "3"]
    assert all(m.state is MessageState.DELIVERED for m in result.messages())


async def test_turn_limit_fails_pending_messages_and_warns_first() -> None:
    gate = ref.Gate()
    sc = ref.Scenario(
        ref.Turn("t0", auto_continue=True), ref.Turn("t1", auto_continue=True), ref.Turn("t2", gate), ref.Turn("t3")
    )
    stream = Agent(ref.Driver(scenario=sc)).send("go", policy=Policy(messages=MessagePolicy(max_turns=3)))
    await gate.reached.wait()
    await stream.send("too late", id="late", when=Timing.AFTER_TURN)
    gate.open()
    events = await collect(stream)
    result = await stream.result()
    assert result.turns == 3 and result.text == "t2"
    notices = [e for e in of_type(events, Notice) if e.kind == "limit.approaching"]
    assert len(notices) == 1 and notices[0].data["turns"] == 2  # min(ceil(0.8 * 3), 3 - 1)
    (m,) = result.undelivered()
    assert m.reason is MessageFailure.LIMIT_EXCEEDED and m.text == "too late"


async def test_cancellation_fails_pending_input_with_cancelled() -> None:
    gate = ref.Gate()
    caps = MessageCapabilities(boundaries=frozenset({Boundary.TURN_END}), continue_mode=ContinueMode.IN_RUN)
    driver = ref.Driver(scenario=ref.Scenario(ref.Turn("w", gate)), messages=caps)
    stream = Agent(driver).send("t")
    await gate.reached.wait()
    await stream.send("pending", id="p")
    stream.cancel()
    with pytest.raises(RunCancelled) as info:
        await stream.result()
    assert info.value.result is not None
    (m,) = info.value.result.undelivered()
    assert m.reason is MessageFailure.CANCELLED and m.text == "pending"


async def test_failed_run_fails_pending_input_with_run_failed() -> None:
    gate = ref.Gate()
    caps = MessageCapabilities(boundaries=frozenset({Boundary.TURN_END}), continue_mode=ContinueMode.IN_RUN)
    driver = ref.Driver(scenario=ref.Scenario(ref.Turn(gate, ref.Fail("provider down"))), messages=caps)
    stream = Agent(driver).send("t")
    await gate.reached.wait()
    await stream.send("keep me", id="k")
    gate.open()
    with pytest.raises(Exception) as info:
        await stream.result()
    (m,) = info.value.result.undelivered()  # type: ignore[attr-defined]
    assert m.reason is MessageFailure.RUN_FAILED and m.text == "keep me"


async def test_oversized_message_is_rejected_with_its_text() -> None:
    _, driver = gated()
    stream = Agent(driver).send("t")
    with pytest.raises(MessageError, match="limit") as info:
        await stream.send("x" * 70_000)
    assert info.value.text == "x" * 70_000
    stream.cancel()
    with pytest.raises(RunCancelled):
        await stream


async def test_messages_admitted_before_launch_are_delivered() -> None:
    stream = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("a"), ref.Turn("b")))).send("t")
    await stream.send("early", id="e", when=Timing.AFTER_TURN)
    result = await stream
    assert result.messages()[0].state is MessageState.DELIVERED


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    plan=st.lists(
        st.tuples(st.sampled_from(list(Timing)), st.integers(min_value=0, max_value=3)), min_size=1, max_size=12
    ),
    cancel_at=st.one_of(st.none(), st.integers(min_value=0, max_value=12)),
    fail=st.booleans(),
    seed=st.integers(min_value=0, max_value=10_000),
)
def test_every_admitted_message_ends_delivered_or_failed_with_its_text(plan, cancel_at, fail, seed) -> None:  # type: ignore[no-untyped-def]
    asyncio.run(_interleaving(plan, cancel_at, fail, seed))


async def _interleaving(plan, cancel_at, fail, seed) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    steps: list = []
    for i in range(6):
        steps.append(ref.Text(f"s{i} "))
        steps.append(ref.Delay(0))
    if fail:
        steps.append(ref.Fail("scripted failure"))
    turns = [ref.Turn(*steps)] + [ref.Turn(f"turn {i}", ref.Delay(0)) for i in range(4)]
    stream = Agent(ref.Driver(scenario=ref.Scenario(*turns))).send(
        "go", policy=Policy(messages=MessagePolicy(max_turns=3, max_pending=4))
    )
    admitted: dict[str, str] = {}
    for n, (timing, yields) in enumerate(plan):
        if cancel_at is not None and n == cancel_at:
            stream.cancel()
        for _ in range(yields + rng.randint(0, 2)):
            await asyncio.sleep(0)
        text = f"message {n} {rng.random()}"
        try:
            mid = await asyncio.wait_for(stream.send(text, id=f"id{n}", when=timing), 5)
            admitted[mid] = text
        except MessageError as exc:
            assert exc.text == text
    try:
        result = await stream.result()
    except Exception as exc:
        result = exc.result  # type: ignore[attr-defined]
    outcomes = {m.id: m for m in result.messages()}
    assert set(outcomes) == set(admitted)
    for mid, text in admitted.items():
        m = outcomes[mid]
        assert m.text == text
        assert m.state in (MessageState.DELIVERED, MessageState.FAILED)
        if m.state is MessageState.FAILED:
            assert m.reason is not MessageFailure.NONE


async def test_wrap_up_guidance_rides_on_the_first_continuation_batch_after_the_warning() -> None:
    gate1, gate2 = ref.Gate(), ref.Gate()
    driver = ref.Driver(scenario=ref.Scenario(ref.Turn("t0", gate1), ref.Turn("t1", gate2), ref.Turn("t2")))
    stream = Agent(driver).send("go", policy=Policy(messages=MessagePolicy(max_turns=3)))
    await gate1.reached.wait()
    await stream.send("before the warning", id="a", when=Timing.AFTER_TURN)
    gate1.open()
    await gate2.reached.wait()
    await stream.send("after the warning", id="b", when=Timing.AFTER_TURN)
    gate2.open()
    events = await collect(stream)
    result = await stream.result()
    assert result.turns == 3
    first, second = driver.delivered
    assert "Wrap up" not in first.text  # turn 1 of 3: no warning yet
    assert "after the warning" in second.text and "2 of 3 turns are used" in second.text and "Wrap up" in second.text
    assert second.original == "after the warning"
    # Outcomes and the transcript keep what the host wrote.
    assert [m.text for m in result.messages()] == ["before the warning", "after the warning"]
    notice = next(e for e in of_type(events, Notice) if e.kind == "limit.approaching")
    update = next(e for e in of_type(events, MessageUpdate) if e.id == "b" and e.state is MessageState.DELIVERED)
    assert notice.meta.sequence < update.meta.sequence


async def test_wrap_up_guidance_never_starts_a_turn_alone() -> None:
    driver = ref.Driver(scenario=ref.Scenario(ref.Turn("t0", auto_continue=True), ref.Turn("t1")))
    stream = Agent(driver).send("go", policy=Policy(messages=MessagePolicy(max_turns=3)))
    events = await collect(stream)
    result = await stream.result()
    assert [e.kind for e in of_type(events, Notice) if e.kind == "limit.approaching"] == ["limit.approaching"]
    assert result.turns == 2 and driver.delivered == []  # warned after turn 2, nothing queued: the run just ends


async def test_wrap_up_guidance_is_left_out_of_a_batch_it_does_not_fit() -> None:
    gate = ref.Gate()
    turns = (ref.Turn("t0", auto_continue=True), ref.Turn("t1", auto_continue=True), ref.Turn("t2", gate))
    driver = ref.Driver(scenario=ref.Scenario(*turns, ref.Turn("t3")))
    stream = Agent(driver).send("go", policy=Policy(messages=MessagePolicy(max_turns=4)))  # warning after turn 3
    await gate.reached.wait()
    big = "x" * (64 * 1024 - 250)  # fits the framed limit, but not with the guidance appended
    await stream.send(big, id="big", when=Timing.AFTER_TURN)
    gate.open()
    result = await stream.result()
    assert result.turns == 4
    (only,) = driver.delivered
    assert only.original == big and "Wrap up" not in only.text
