"""Behaviour the specification asks for where the engine used to deviate from it."""

from __future__ import annotations

import asyncio

import pytest

from adaptor_nb import (
    Agent,
    AuthorKind,
    ConfigError,
    MessagePolicy,
    Policy,
    RunError,
    Timing,
    TurnEnd,
    message_attributes,
)
from adaptor_nb._core._binding import recovery_prefix
from adaptor_nb._core._options import RunSettings
from adaptor_nb._policy import Author
from adaptor_nb.drivers import reference as ref
from adaptor_nb.threadstore._protocol import HistoryEntry, ThreadRecord

from .helpers import collect, of_type

# -- a. the continuity prefix fits 8 KiB, titles included ---------------------------------------------------


def _record(history: list[HistoryEntry]) -> ThreadRecord:
    return ThreadRecord(key="k", history=tuple(history))


@pytest.mark.parametrize("size", [100, 1000, 2500, 4096])
def test_continuity_prefix_with_titles_fits_8_kib(size: int) -> None:
    history = [HistoryEntry("guidance", "g" * size, 0.0) for _ in range(6)]
    history += [HistoryEntry("assistant", "é" * (size // 2), 0.0) for _ in range(6)]
    prefix = recovery_prefix(_record(history))
    assert "Earlier guidance from the user:" in prefix
    assert len(prefix.encode()) <= 8 * 1024


def test_continuity_prefix_is_filled_up_to_the_bound() -> None:
    history = [HistoryEntry("guidance", "x" * 4000, 0.0) for _ in range(3)]
    history += [HistoryEntry("assistant", "y" * 4000, 0.0) for _ in range(3)]
    prefix = recovery_prefix(_record(history))
    assert 8 * 1024 - 16 <= len(prefix.encode()) <= 8 * 1024
    assert "Recent answers you gave:" in prefix or prefix.count("- x") >= 2


# -- h. construction-only options without an implementation are refused by Agent(...) ----------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("tools", [object()]),
        ("profile", object()),
        ("skill_provider", object()),
        ("skill_materializer", object()),
    ],
)
def test_unimplemented_construction_options_are_refused_at_construction(option: str, value: object) -> None:
    with pytest.raises(ConfigError) as info:
        Agent(ref.Driver(), **{option: value})
    assert info.value.option == option
    assert option in str(info.value)


async def test_an_empty_tool_set_is_no_request() -> None:
    assert (await Agent(ref.Driver(), tools=[]).send("hi")).text


# -- i. TurnEnd.err on a failed turn ------------------------------------------------------------------------


async def test_a_failed_turn_has_a_turn_end_with_the_error() -> None:
    sc = ref.Scenario(ref.Turn("partial ", ref.Fail("the provider broke")))
    stream = Agent(ref.Driver(scenario=sc)).send("go")
    events = await collect(stream)
    ends = of_type(events, TurnEnd)
    assert len(ends) == 1
    assert isinstance(ends[0].err, RunError) and "the provider broke" in str(ends[0].err)
    assert ends[0].turn == 1 and ends[0].result is not None and ends[0].result.text == "partial "
    with pytest.raises(RunError) as info:
        await stream.result()
    assert info.value.result is not None and info.value.result.turns == 1


async def test_a_failure_after_a_completed_turn_numbers_the_failed_turn_next() -> None:
    sc = ref.Scenario(ref.Turn("one", auto_continue=True), ref.Turn(ref.Fail("second turn broke")))
    events = await collect(Agent(ref.Driver(scenario=sc)).send("go"))
    ends = of_type(events, TurnEnd)
    assert [e.turn for e in ends] == [1, 2]
    assert ends[0].err is None and isinstance(ends[1].err, RunError)


async def test_successful_turns_have_no_error() -> None:
    events = await collect(Agent(ref.Driver()).send("go"))
    assert [e.err for e in of_type(events, TurnEnd)] == [None]


# -- j. message_attributes and RunSettings.cap_message_turns (§16) -------------------------------------------


def test_message_attributes_defaults() -> None:
    ctx = message_attributes()
    assert ctx.id == "" and ctx.author.kind is AuthorKind.HUMAN and ctx.timing is Timing.SOON


def test_message_attributes_reads_only_message_options() -> None:
    peer = Author(kind=AuthorKind.AGENT, id="p")
    ctx = message_attributes(model="ignored", timeout=-5, id="m-1", author=peer, when=Timing.AFTER_TURN)
    assert (ctx.id, ctx.author, ctx.timing) == ("m-1", peer, Timing.AFTER_TURN)


def test_cap_message_turns_lowers_only_the_turn_budget() -> None:
    policy = Policy(messages=MessagePolicy(max_pending=5, max_turns=10))
    s = RunSettings(model="m", policy=policy)
    capped = s.cap_message_turns(3)
    assert capped.policy.messages.max_turns == 3
    assert capped.policy.messages.max_pending == 5 and capped.model == "m"
    assert s.policy.messages.max_turns == 10  # the original is unchanged
    assert s.cap_message_turns(50).policy.messages.effective_max_turns == 10  # a cap never raises the budget
    assert RunSettings().cap_message_turns(4).policy.messages.effective_max_turns == 4


@pytest.mark.parametrize("bad", [0, -1])
def test_cap_message_turns_refuses_a_nonpositive_budget(bad: int) -> None:
    with pytest.raises(ValueError, match="positive"):
        RunSettings().cap_message_turns(bad)


async def test_a_capped_budget_limits_the_run() -> None:
    sc = ref.Scenario(*(ref.Turn(f"t{i}", auto_continue=True) for i in range(5)))
    settings = RunSettings().cap_message_turns(2)
    r = await Agent(ref.Driver(scenario=sc)).send("go", policy=settings.policy)
    assert r.turns == 2


_ = asyncio


# -- b. Standby.cancel() fails queued separate executions with CANCELLED -------------------------------------


async def test_standby_cancel_fails_queued_executions_and_reports_them() -> None:
    from adaptor_nb import MessageFailure, MessageState, MessageUpdate, RunCancelled

    gate = ref.Gate()
    agent = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(gate, "first"))))
    sb = await agent.thread("b").standby()
    seen: list[object] = []
    got_update = asyncio.Event()

    async def consume() -> None:
        async for ev in sb.events():
            seen.append(ev)
            if isinstance(ev, MessageUpdate) and ev.id == "queued-1":
                got_update.set()

    consumer = asyncio.get_running_loop().create_task(consume())
    await sb.send("start")
    await gate.reached.wait()
    await sb.send("a separate run", id="queued-1", model="other")  # an execution option: queued separately
    current = sb.current
    assert current is not None
    sb.cancel()
    with pytest.raises(RunCancelled) as info:
        await current.result()
    assert info.value.result is not None
    outcomes = {m.id: m for m in info.value.result.messages()}
    assert outcomes["queued-1"].state is MessageState.FAILED
    assert outcomes["queued-1"].reason is MessageFailure.CANCELLED
    assert outcomes["queued-1"].text == "a separate run"
    await asyncio.wait_for(got_update.wait(), 5)
    update = next(e for e in seen if isinstance(e, MessageUpdate) and e.id == "queued-1")
    assert update.state is MessageState.FAILED and update.reason is MessageFailure.CANCELLED
    assert update.text == "a separate run"
    # The queued run never starts, and the Standby still accepts input.
    gate.open()
    await sb.send("again")
    assert sb.current is not current
    assert (await asyncio.wait_for(sb.current.result(), 5)).text == "first"  # type: ignore[union-attr]
    await sb.close()
    consumer.cancel()


# -- c. an approval raised on a Standby before events() waits for events() -----------------------------------


async def test_standby_approval_raised_before_events_waits_for_the_consumer() -> None:
    from adaptor_nb import ApprovalKind, ApprovalPolicy, ApprovalRequest

    from .test_approvals import _TellsWhenItAsks

    asked = asyncio.Event()
    tool = ref.ToolUse("Bash", {"command": "ls"}, {"ok": True}, approval=ApprovalKind.PERMISSION)
    agent = Agent(_TellsWhenItAsks(asked, scenario=ref.Scenario(ref.Turn(tool, "after"))))
    sb = await agent.thread("c").standby()
    await sb.send("go", policy=Policy(approvals=ApprovalPolicy(timeout=0.2)))
    stream = sb.current
    assert stream is not None
    await asked.wait()
    result = asyncio.get_running_loop().create_task(stream.result())
    # Nobody listens yet: the request is neither dropped nor left to time out; the run waits for events().
    done, _ = await asyncio.wait({result}, timeout=0.6)
    assert not done
    async for ev in sb.events():
        if isinstance(ev, ApprovalRequest):
            ev.approve()
            break
    assert (await asyncio.wait_for(result, 5)).text == "after"
    await sb.close()


# -- g. incomplete cleanup in Agent.close() is reported and stays retryable ----------------------------------


class _FlakyCleanup(ref.Driver):
    """Parks a persistent process whose closer fails the first ``fail`` times; its aclose() fails once."""

    def __init__(self, fail: int = 1, hang: bool = False) -> None:
        super().__init__()
        self.fail, self.hang = fail, hang
        self.closed: list[str] = []
        self.aclose_calls = 0

    def descriptor(self):  # type: ignore[no-untyped-def]
        from dataclasses import replace

        return replace(super().descriptor(), persistent=True)

    async def run(self, invocation, ctx):  # type: ignore[no-untyped-def]
        key = invocation.thread_key

        async def closer() -> None:
            if self.hang and not self.closed and self.fail:
                self.fail -= 1
                await asyncio.Event().wait()
            if key == "bad" and self.fail:
                self.fail -= 1
                raise OSError("kill failed")
            self.closed.append(key)

        assert invocation.slot is not None
        invocation.slot.attach(object(), "fp", closer)
        return await super().run(invocation, ctx)

    async def aclose(self) -> None:
        self.aclose_calls += 1
        if self.aclose_calls == 1:
            raise RuntimeError("driver cleanup failed")


async def test_a_failing_closer_is_reported_and_retried_by_a_later_close() -> None:
    from adaptor_nb import AgentCloseError
    from adaptor_nb._errors import AdaptorError

    driver = _FlakyCleanup()
    agent = Agent(driver)
    await agent.thread("bad").send("x")
    await agent.thread("good").send("y")
    with pytest.raises(AgentCloseError) as info:
        await agent.close()
    assert isinstance(info.value, AdaptorError)
    assert "'bad'" in str(info.value) and "kill failed" in str(info.value)
    assert "aclose" in str(info.value) and len(info.value.failures) == 2
    assert driver.closed == ["good"]  # every other slot was still closed
    await agent.close()  # the retry finishes the cleanup
    assert sorted(driver.closed) == ["bad", "good"]
    await agent.close()  # and close stays idempotent


async def test_a_timed_out_closer_is_reported_and_retried() -> None:
    from adaptor_nb import AgentCloseError

    driver = _FlakyCleanup(hang=True)
    driver.aclose_calls = 1  # only the closer misbehaves here
    agent = Agent(driver)
    await agent.thread("slow").send("x")
    with pytest.raises(AgentCloseError, match="timed out"):
        await agent.close(timeout=0.05)
    await agent.close()
    assert driver.closed == ["slow"]


# -- d. run service providers (§12) --------------------------------------------------------------------------


class _Services:
    """A user's run service provider: one build service, a preamble, results and an event source."""

    def __init__(self, *, detach_error: bool = False, hang: bool = False) -> None:
        self.calls: list[str] = []
        self.detach_error, self.hang = detach_error, hang

    async def attach_run(self, run_id: str):  # type: ignore[no-untyped-def]
        from adaptor_nb import Notice, RunStarted
        from adaptor_nb._result import ServiceReport, SubagentResult
        from adaptor_nb.services import RunAttachment

        self.calls.append(f"attach {run_id}")

        async def events(rid: str, stop: asyncio.Event):  # type: ignore[no-untyped-def]
            yield Notice(kind="lifecycle", text=f"build service up for {rid}")
            yield RunStarted(run_id="the-service's-own-run")  # filtered by the core
            await stop.wait()
            yield Notice(kind="lifecycle", text="build service flushed")

        def results() -> list[SubagentResult]:
            self.calls.append("results")
            return [SubagentResult(member="build", task="compile", state="done")]

        return RunAttachment(
            preamble="A build service is available.",
            results=results,
            services=[ServiceReport(name="build", state="ready", endpoint="http://127.0.0.1:1")],
            events=events,
        )

    async def detach_run(self, run_id: str) -> None:
        self.calls.append(f"detach {run_id}")
        if self.hang:
            await asyncio.Event().wait()
        if self.detach_error:
            raise OSError("could not stop the build service")


class _Recording(ref.Driver):
    def __init__(self) -> None:
        super().__init__()
        self.prompts: list[str] = []

    async def run(self, invocation, ctx):  # type: ignore[no-untyped-def]
        self.prompts.append(invocation.prompt)
        return await super().run(invocation, ctx)


async def test_run_services_are_attached_reported_and_detached() -> None:
    from adaptor_nb import Done, Notice, RunFinished, RunStarted

    provider = _Services()
    driver = _Recording()
    stream = Agent(driver, run_services=[provider]).send("hello")
    events = await collect(stream)
    result = await stream.result()
    rid = stream.run_id
    assert provider.calls == [f"attach {rid}", "results", f"detach {rid}"]
    assert driver.prompts[0].startswith("A build service is available.") and driver.prompts[0].endswith("hello")
    assert [s.name for s in result.services()] == ["build"]
    assert [(s.member, s.task) for s in result.subagents()] == [("build", "compile")]
    texts = [e.text for e in of_type(events, Notice)]
    assert f"build service up for {rid}" in texts and "build service flushed" in texts
    assert len(of_type(events, RunStarted)) == 1 and of_type(events, RunStarted)[0].run_id == rid
    seqs = [e.meta.sequence for e in events]
    assert seqs == sorted(seqs) and all(e.meta.run_id == rid for e in events)
    runtime = [e for e in of_type(events, Notice) if e.kind == "runtime"]
    assert [n.data["phase"] for n in runtime] == ["attached", "detached"]
    # Source events come before RunFinished and Done.
    flushed = next(i for i, e in enumerate(events) if isinstance(e, Notice) and e.text == "build service flushed")
    assert flushed < next(i for i, e in enumerate(events) if isinstance(e, RunFinished))
    assert isinstance(events[-1], Done)


async def test_run_service_cleanup_errors_join_the_outcome() -> None:
    from adaptor_nb import Done

    stream = Agent(ref.Driver(), run_services=[_Services(detach_error=True)]).send("hello")
    events = await collect(stream)
    with pytest.raises(RunError, match="could not stop the build service") as info:
        await stream.result()
    done = events[-1]
    assert isinstance(done, Done) and done.err is info.value and done.result is None
    assert info.value.result is not None and [s.name for s in info.value.result.services()] == ["build"]


async def test_run_service_cleanup_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import adaptor_nb._core._services as services

    monkeypatch.setattr(services, "CLEANUP_TIMEOUT", 0.05)
    stream = Agent(ref.Driver(), run_services=[_Services(hang=True)]).send("hello")
    with pytest.raises(RunError, match="timed out"):
        await asyncio.wait_for(stream.result(), 5)


async def test_a_failed_run_still_detaches() -> None:
    provider = _Services()
    sc = ref.Scenario(ref.Turn(ref.Fail("broken")))
    stream = Agent(ref.Driver(scenario=sc), run_services=[provider]).send("hello")
    with pytest.raises(RunError, match="broken"):
        await stream.result()
    assert provider.calls[-1] == f"detach {stream.run_id}"


# -- i. transcript.item and thread.ownership notices ---------------------------------------------------------


async def test_transcript_items_are_announced_as_they_come() -> None:
    from adaptor_nb import Notice

    sc = ref.Scenario(ref.Turn(ref.ThinkingStep("hmm"), "answer"))
    stream = Agent(ref.Driver(scenario=sc)).send("go")
    events = await collect(stream)
    items = [e.item for e in of_type(events, Notice) if e.kind == "transcript.item"]
    assert items == (await stream.result()).transcript()
    assert [i.kind for i in items] == ["thinking", "text"]


class _ReleaseFails:
    """A user's thread store whose lease release fails (everything else is the memory store)."""

    def __init__(self) -> None:
        from adaptor_nb.threadstore._memory import MemoryStore

        self._store = MemoryStore()

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._store, name)

    async def release_lease(self, lease):  # type: ignore[no-untyped-def]
        raise OSError("the store is read-only")


async def test_a_failed_ownership_release_is_reported() -> None:
    from adaptor_nb import Notice

    stream = Agent(ref.Driver(), thread_store=_ReleaseFails()).thread("t").send("go")
    events = await collect(stream)
    await stream.result()
    owned = [e for e in of_type(events, Notice) if e.kind == "thread.ownership"]
    assert len(owned) == 1 and owned[0].data["event"] == "release_failed"
    assert "read-only" in owned[0].data["error"]
