import asyncio

import pytest

from adaptor_nb import (
    Agent,
    MessageFailure,
    Notice,
    RunCancelled,
    RunError,
    ThreadAlreadyExistsError,
    ThreadBusyError,
    ThreadCheckpointMissingError,
    ThreadIncompatibleError,
    ThreadNotFoundError,
    Timing,
)
from adaptor_nb.driver import Boundary, ContinueMode, MessageCapabilities
from adaptor_nb.drivers import reference as ref
from adaptor_nb.threadstore import MemoryStore

from .helpers import collect, of_type


async def test_thread_continues_across_sends() -> None:
    th = Agent(ref.Driver()).thread("review")
    await th.send("first")
    r = await th.send("second")
    assert "1 earlier prompt" in r.text
    assert r.thread_key == "review"


async def test_thread_continues_in_a_new_agent_on_the_same_store() -> None:
    store = MemoryStore()
    a1 = Agent(ref.Driver(), thread_store=store)
    await a1.thread("k").send("one")
    await a1.close()
    a2 = Agent(ref.Driver(), thread_store=store)
    r = await a2.thread("k", resume_only=True).send("two")
    assert "1 earlier prompt" in r.text


async def test_resume_only_fails_for_a_missing_thread() -> None:
    with pytest.raises(ThreadNotFoundError):
        await Agent(ref.Driver()).thread("nope", resume_only=True).send("hi")


async def test_checkpoint_after_a_healthy_run() -> None:
    th = Agent(ref.Driver()).thread("c")
    assert await th.checkpoint() is None
    r = await th.send("hi")
    ck = await th.checkpoint()
    assert ck is not None and ck.driver == "reference" and ck.run_id == r.run_id and ck.session_id


async def test_a_failed_run_never_replaces_a_healthy_checkpoint() -> None:
    agent = Agent(ref.Driver())
    th = agent.thread("f")
    await th.send("ok")
    healthy = await th.checkpoint()
    failing = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("x", ref.Fail("boom")))), thread_store=agent.store)
    with pytest.raises(RunError):
        await failing.thread("f").send("again")
    assert await th.checkpoint() == healthy


async def test_a_cancelled_run_keeps_the_checkpoint() -> None:
    gate = ref.Gate()
    agent = Agent(ref.Driver())
    await agent.thread("c2").send("ok")
    healthy = await agent.thread("c2").checkpoint()
    slow = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(gate))), thread_store=agent.store)
    s = slow.thread("c2").send("hang")
    await gate.reached.wait()
    s.cancel()
    with pytest.raises(RunCancelled):
        await s
    assert await agent.thread("c2").checkpoint() == healthy


async def test_second_send_while_running_is_busy_through_result() -> None:
    gate = ref.Gate()
    agent = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(gate, "x"))))
    th = agent.thread("busy")
    s1 = th.send("a")
    await gate.reached.wait()
    s2 = agent.thread("busy").send("b")
    with pytest.raises(ThreadBusyError):
        await s2
    gate.open()
    await s1


async def test_another_owner_on_the_same_store_is_excluded_by_the_lease() -> None:
    gate = ref.Gate()
    store = MemoryStore()
    a1 = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(gate, "x"))), thread_store=store)
    a2 = Agent(ref.Driver(), thread_store=store)
    s1 = a1.thread("shared").send("a")
    await gate.reached.wait()
    with pytest.raises(ThreadBusyError):
        await a2.thread("shared").send("b")
    gate.open()
    await s1
    await a2.thread("shared").send("c")  # free again


async def test_fork_starts_from_the_parent_and_leaves_it_unchanged() -> None:
    agent = Agent(ref.Driver())
    parent = agent.thread("p")
    await parent.send("p1")
    before = await parent.checkpoint()
    child = parent.fork("child")
    r = await child.send("c1")
    assert "1 earlier prompt" in r.text
    assert await parent.checkpoint() == before
    child_ck = await child.checkpoint()
    assert child_ck is not None and child_ck.session_id != before.session_id  # type: ignore[union-attr]
    r2 = await parent.send("p2")
    assert "1 earlier prompt" in r2.text  # the child's prompt did not reach the parent


async def test_fork_rejects_an_occupied_target_and_a_parent_without_checkpoint() -> None:
    agent = Agent(ref.Driver())
    await agent.thread("p").send("x")
    await agent.thread("taken").send("y")
    with pytest.raises(ThreadAlreadyExistsError):
        await agent.thread("p").fork("taken").send("z")
    with pytest.raises(ThreadCheckpointMissingError):
        await agent.thread("empty").fork("c").send("z")


async def test_incompatible_configuration_falls_back_with_a_continuity_notice() -> None:
    agent = Agent(ref.Driver(), model="m1")
    await agent.thread("t").send("remember the number 42")
    s = agent.thread("t").send("what number?", model="m2")
    events = await collect(s)
    notices = [e for e in of_type(events, Notice) if e.kind == "thread.continuity"]
    assert len(notices) == 1 and notices[0].data["reason"] == "incompatible"
    result = await s
    assert "earlier prompt" not in result.text  # a fresh provider session


async def test_resume_only_rejects_an_incompatible_thread() -> None:
    agent = Agent(ref.Driver(), model="m1")
    await agent.thread("t").send("x")
    with pytest.raises(ThreadIncompatibleError):
        await agent.thread("t", resume_only=True).send("y", model="m2")


async def test_resume_rejection_falls_back_once_with_a_bounded_recovery_prefix() -> None:
    prompts: list[str] = []

    class Forgetful(ref.Driver):
        async def run(self, invocation, ctx):  # type: ignore[no-untyped-def]
            prompts.append(invocation.prompt)
            return await super().run(invocation, ctx)

    store = MemoryStore()
    a1 = Agent(Forgetful(), thread_store=store)
    for i in range(5):
        await a1.thread("t").send(f"question {i} " + "x" * 3000)
    from adaptor_nb.drivers.reference import _driver

    _driver._SESSIONS.clear()  # the provider lost its sessions (like a new machine)
    s = a1.thread("t").send("next")
    events = await collect(s)
    await s
    notices = [e for e in of_type(events, Notice) if e.kind == "thread.continuity"]
    assert len(notices) == 1 and notices[0].data["reason"] == "resume_rejected"
    prefix = prompts[-1][: -len("next")]
    assert prompts[-1].endswith("next")
    assert 0 < len(prefix.encode()) <= 8 * 1024
    assert prefix.count("Scripted reply") <= 3
    with pytest.raises(Exception, match="no reference session"):
        _driver._SESSIONS.clear()
        await Agent(Forgetful(), thread_store=store).thread("t", resume_only=True).send("again")


async def test_standby_joins_the_current_run_or_starts_one() -> None:
    gate = ref.Gate()
    agent = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("w", gate, "done"), "second")))
    th = agent.thread("sb")
    sb = await th.standby()
    assert await th.standby() is sb
    events: list = []

    async def consume() -> None:
        async for ev in sb.events():
            events.append(ev)
            if ev.__class__.__name__ == "Done" and len([e for e in events if e.__class__.__name__ == "Done"]) == 2:
                return

    consumer = asyncio.ensure_future(consume())
    await sb.send("start")
    await gate.reached.wait()
    await sb.send("join me", id="j1")  # joins the current run
    with pytest.raises(ThreadBusyError):
        await th.send("direct send while standby lives")
    gate.open()
    first = sb.current
    assert first is not None
    r1 = await first
    assert [m.id for m in r1.messages()] == ["j1"]
    await sb.send("next run")  # idle: starts a new execution
    assert sb.current is not first
    await sb.current
    await asyncio.wait_for(consumer, 5)
    run_ids = {e.meta.run_id for e in events}
    assert len(run_ids) == 2
    await sb.close()
    await th.send("free after close")


async def test_standby_cancel_fails_queued_input_and_keeps_accepting() -> None:
    gate = ref.Gate()
    caps = MessageCapabilities(boundaries=frozenset({Boundary.TURN_END}), continue_mode=ContinueMode.IN_RUN)
    agent = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(gate)), messages=caps))
    sb = await agent.thread("sb2").standby()
    await sb.send("start")
    await gate.reached.wait()
    await sb.send("queued", id="q", when=Timing.AFTER_TURN)
    cur = sb.current
    sb.cancel()
    with pytest.raises(RunCancelled) as info:
        await cur  # type: ignore[misc]
    (m,) = info.value.result.undelivered()  # type: ignore[union-attr]
    assert m.reason is MessageFailure.CANCELLED
    gate.open()
    await sb.send("again")
    again = await sb.current  # type: ignore[misc]
    assert again.turns == 1 and again.run_id != cur.run_id  # type: ignore[union-attr]
    await sb.close()


async def test_standby_retries_once_after_a_retryable_failure_and_carries_input() -> None:
    gate = ref.Gate()
    calls: list[str] = []
    retry_started = asyncio.Event()

    class Flaky(ref.Driver):
        async def run(self, invocation, ctx):  # type: ignore[no-untyped-def]
            calls.append(invocation.prompt)
            if len(calls) == 2:
                retry_started.set()
            if len(calls) == 1:
                await gate.pass_through()
                from adaptor_nb.driver import DriverFailure

                raise DriverFailure("overloaded", retryable=True, retry_after=0.01)
            return await ref.Driver.run(self, invocation, ctx)

    caps = MessageCapabilities(boundaries=frozenset({Boundary.TURN_END}), continue_mode=ContinueMode.IN_RUN)
    agent = Agent(Flaky(messages=caps))
    sb = await agent.thread("retry").standby()
    await sb.send("start")
    await gate.reached.wait()
    await sb.send("carry me", id="c1", when=Timing.AFTER_TURN)
    failed_stream = sb.current
    gate.open()
    with pytest.raises(RunError) as info:
        await failed_stream  # type: ignore[misc]
    assert info.value.result.undelivered()[0].reason is MessageFailure.RUN_FAILED  # type: ignore[union-attr]
    async with asyncio.timeout(10):
        await retry_started.wait()
    assert sb.current is not failed_stream
    retried = await sb.current  # type: ignore[misc]
    assert calls[-1] == "carry me"
    assert retried.text and "carry me" in retried.text
    await sb.close()


async def test_planning_notices_come_after_run_started() -> None:
    agent = Agent(ref.Driver(resume=False))
    th = agent.thread("k")
    await th.send("one")
    events = await collect(th.send("two"))
    assert type(events[0]).__name__ == "RunStarted"
    assert any(isinstance(e, Notice) and e.kind == "thread.continuity" for e in events[1:])


async def test_standby_events_end_when_it_is_closed() -> None:
    sb = await Agent(ref.Driver()).thread("sb-close").standby()
    seen: list = []

    async def consume() -> None:
        async for ev in sb.events():
            seen.append(ev)

    consumer = asyncio.ensure_future(consume())
    await sb.send("hello")
    await sb.current  # type: ignore[misc]
    await sb.close()
    await asyncio.wait_for(consumer, 5)
    assert type(seen[-1]).__name__ == "Done"
