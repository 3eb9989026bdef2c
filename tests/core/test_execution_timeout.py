"""``execution_timeout`` counts the run's working time only: a run that waits for a person's approval longer than
its budget still finishes, a run that works past it ends with ``RunError`` reason ``deadline_exceeded``; and
``RunError`` says why a run failed (``reason``) and what failed underneath (``cause``)."""

from __future__ import annotations

import asyncio

import pytest

from adaptor_nb import (
    AdaptorError,
    Agent,
    AgentFailed,
    ApprovalKind,
    ApprovalRequest,
    ConfigError,
    FailureReason,
    RunCancelled,
    RunError,
    RunFinished,
)
from adaptor_nb._core._work_clock import WorkClock
from adaptor_nb.driver import Descriptor, DriverFailure, DriverOutcome, Invocation, RunContext
from adaptor_nb.drivers import reference as ref

from .helpers import collect


class FakeTime:
    """A hand-moved monotonic clock."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_work_clock_stands_still_while_held_and_nested_holds_count_once() -> None:
    t = FakeTime()
    clock = WorkClock(now=t)
    t.now += 2
    clock.hold()
    t.now += 50
    clock.hold()
    t.now += 5
    clock.release()
    assert clock.held and clock.elapsed() == 2
    t.now += 10
    clock.release()
    t.now += 3
    assert not clock.held and clock.elapsed() == 5
    clock.release()  # an extra release changes nothing
    assert clock.elapsed() == 5


def _held_approval_scenario() -> ref.Scenario:
    return ref.Scenario(
        ref.Turn("checking", ref.ToolUse("Bash", {"command": "ls"}, approval=ApprovalKind.PERMISSION), "done")
    )


async def test_time_waiting_for_an_approval_does_not_count() -> None:
    answers: list[asyncio.Event] = []

    async def slow_person(request: ApprovalRequest) -> None:
        # The person answers well after the 0.5 s budget would have run out on a wall clock.
        answered = asyncio.Event()
        answers.append(answered)
        asyncio.get_running_loop().call_later(2.0, answered.set)
        await answered.wait()
        request.approve()

    scenario = _held_approval_scenario()
    async with Agent(ref.Driver(scenario=scenario), on_approval=slow_person) as agent:
        result = await agent.send("go", execution_timeout=0.5).result()
        assert len(answers) == 1 and answers[0].is_set()
        held_by_timeout = agent.send("go", timeout=0.5)
        with pytest.raises(RunCancelled):  # the plain timeout counts the wait, and cancels
            await held_by_timeout.result()
    assert result.text.endswith("done")


async def test_working_past_the_budget_ends_with_deadline_exceeded() -> None:
    gate = ref.Gate()  # never opened: the run works (waits on its tool) until the budget runs out
    scenario = ref.Scenario(ref.Turn("started", gate))
    async with Agent(ref.Driver(scenario=scenario)) as agent:
        events = await collect(agent.send("go", execution_timeout=0.3))
    done = events[-1]
    err = done.err  # type: ignore[attr-defined]
    assert isinstance(err, RunError) and not isinstance(err, RunCancelled)
    assert err.reason is FailureReason.DEADLINE_EXCEEDED and err.reason == "deadline_exceeded"
    assert str(err).startswith("deadline_exceeded: the run exceeded its execution_timeout")
    assert err.details["execution_timeout"] == 0.3
    assert err.result is not None and err.result.text == "started"
    finished = [e for e in events if isinstance(e, RunFinished)]
    assert finished and finished[0].reason is FailureReason.DEADLINE_EXCEEDED
    assert gate.reached.is_set()


@pytest.mark.parametrize("bad", [-1, "soon", float("nan")])
def test_a_bad_execution_timeout_is_a_config_error_naming_it(bad: object) -> None:
    with pytest.raises(ConfigError) as info:
        Agent(ref.Driver(), execution_timeout=bad)  # type: ignore[arg-type]
    assert info.value.option == "execution_timeout"


class Broken:
    """A driver whose run fails the way it is told to."""

    name = "broken"

    def __init__(self, failure: BaseException) -> None:
        self.failure = failure

    def descriptor(self) -> Descriptor:
        return Descriptor(name=self.name, provider="test")

    def validate_config(self) -> None:
        pass

    def config_fingerprint(self) -> str:
        return "broken"

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        raise self.failure


async def _error(failure: BaseException) -> RunError:
    async with Agent(Broken(failure)) as agent:
        with pytest.raises(RunError) as info:
            await agent.send("x").result()
    return info.value


async def test_an_os_error_from_the_driver_is_infrastructure_with_its_cause() -> None:
    refused = ConnectionRefusedError(111, "Connection refused")
    err = await _error(refused)
    assert err.reason is FailureReason.INFRASTRUCTURE and err.cause is refused
    assert isinstance(err, AgentFailed) and isinstance(err, AdaptorError)  # still an agent failure for old code


async def test_a_driver_failure_keeps_its_reason_and_is_the_cause_unless_it_wraps_one() -> None:
    plain = DriverFailure("the CLI exited with code 9", reason=FailureReason.INFRASTRUCTURE)
    err = await _error(plain)
    assert err.reason == "infrastructure" and err.cause is plain
    missing = FileNotFoundError(2, "No such file", "/bin/agent")
    wrapped = DriverFailure("could not start the CLI", reason=FailureReason.INFRASTRUCTURE, cause=missing)
    assert (await _error(wrapped)).cause is missing


async def test_a_bug_in_a_driver_stays_an_agent_error() -> None:
    bug = KeyError("oops")
    err = await _error(bug)
    assert err.reason is FailureReason.AGENT_ERROR and err.cause is bug
