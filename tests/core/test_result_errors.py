import pytest

from adaptor_nb import (
    AdaptorError,
    Agent,
    AgentFailed,
    ApprovalDenied,
    ApprovalTimeout,
    FailureReason,
    PolicyViolation,
    RunCancelled,
    RunError,
    Usage,
    compose_results,
)
from adaptor_nb.drivers import reference as ref


async def test_usage_is_summed_over_turns() -> None:
    sc = ref.Scenario(ref.Turn("a", auto_continue=True, usage=(10, 2)), ref.Turn("b", usage=(5, 1)))
    result = await Agent(ref.Driver(scenario=sc)).send("x")
    assert result.usage == Usage(input_tokens=15, output_tokens=3)
    assert result.turns == 2 and result.text == "b"


def test_usage_none_means_unobserved_and_zero_means_observed_zero() -> None:
    assert Usage.add(None, None) is None
    assert Usage.add(None, Usage()) == Usage()
    assert Usage(1, 2, 3, 4) + Usage(1, 1, 1, 1) == Usage(2, 3, 4, 5)


async def test_audit_methods_return_copies() -> None:
    sc = ref.Scenario(ref.Turn(ref.ToolUse("Read", {"p": 1}, {"ok": 1}), "done"))
    result = await Agent(ref.Driver(scenario=sc)).send("x")
    t = result.transcript()
    t.clear()
    assert result.transcript()
    m = result.messages()
    m.append(None)  # type: ignore[arg-type]
    assert result.messages() == []
    assert [i.kind for i in result.transcript()] == ["tool_use", "tool_result", "text"]


async def test_business_failure_carries_the_partial_result_and_stderr() -> None:
    sc = ref.Scenario(ref.Turn("partial answer", ref.Stderr("warning: x\n"), ref.Fail("API 500", stderr="fatal: y")))
    with pytest.raises(AgentFailed) as info:
        await Agent(ref.Driver(scenario=sc)).send("x")
    err = info.value
    assert err.reason is FailureReason.AGENT_ERROR and isinstance(err, RunError)
    assert err.result is not None and err.result.text == "partial answer"
    assert b"fatal: y" in err.result.raw().stderr and err.details["stderr_tail"] == "fatal: y"


async def test_an_unexpected_driver_crash_is_an_agent_failure() -> None:
    sc = ref.Scenario(ref.Turn("so far", ref.Crash("segfault-ish")))
    with pytest.raises(AgentFailed, match="segfault-ish") as info:
        await Agent(ref.Driver(scenario=sc)).send("x")
    assert info.value.result.text == "so far"  # type: ignore[union-attr]


def test_each_reason_has_its_class_under_one_root() -> None:
    pairs = {
        FailureReason.APPROVAL_DENIED: ApprovalDenied,
        FailureReason.APPROVAL_TIMEOUT: ApprovalTimeout,
        FailureReason.AGENT_ERROR: AgentFailed,
        FailureReason.CANCELLED: RunCancelled,
        FailureReason.POLICY_VIOLATION: PolicyViolation,
    }
    for reason, cls in pairs.items():
        err = RunError.for_reason(reason, "m", details={"k": 1})
        assert type(err) is cls and err.reason is reason and err.details == {"k": 1}
        assert isinstance(err, AdaptorError)


async def test_compose_results_sums_usage_and_keeps_the_last_text() -> None:
    a = await Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("one", usage=(1, 1))))).send("x")
    b = await Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("two", usage=(2, 2))))).send("y")
    c = compose_results("composite", a, b)
    assert c.text == "two" and c.turns == 2 and c.usage == Usage(3, 3) and c.run_id == "composite"
    assert c.transcript() == a.transcript() + b.transcript()


async def test_raw_holds_streams_and_result_has_model_and_provider() -> None:
    result = await Agent(ref.Driver(), model="demo-model").send("x")
    assert result.model == "demo-model" and result.provider == "reference"
    assert result.metadata == {"scripted": "true"}


async def test_subagent_progress_is_summarized_in_the_result() -> None:
    sc = ref.Scenario(ref.Turn(ref.Subagent("explore the repo", "found 3 modules"), "done"))
    result = await Agent(ref.Driver(scenario=sc)).send("x")
    (sub,) = result.subagents()
    assert sub.task == "explore the repo" and sub.state == "completed" and sub.summary == "found 3 modules"
