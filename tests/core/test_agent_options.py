import asyncio
from datetime import timedelta

import pytest

from adaptor_nb import (
    Agent,
    AgentClosedError,
    ConfigError,
    Identity,
    InvalidPolicyError,
    MessagePolicy,
    Policy,
    SkillKeyConflictError,
)
from adaptor_nb._core._options import RunSettings, merge_run
from adaptor_nb.drivers import reference
from adaptor_nb.skill import Inline


def test_agent_needs_a_driver() -> None:
    with pytest.raises(TypeError, match="needs a driver"):
        Agent(None)  # type: ignore[arg-type]


def test_unknown_option_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="unexpected option 'modle'"):
        Agent(reference.Driver(), modle="x")


async def test_construction_only_option_in_send_is_a_type_error() -> None:
    agent = Agent(reference.Driver())
    with pytest.raises(TypeError, match="construction-only option 'event_buffer'"):
        agent.send("hi", event_buffer=10)
    with pytest.raises(TypeError, match="construction-only option 'thread_store'"):
        agent.thread("k").send("hi", thread_store=None)


def test_call_only_option_in_agent_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="call-only option 'schema'"):
        Agent(reference.Driver(), schema=dict)


def test_send_outside_a_loop_says_how_to_run() -> None:
    agent = Agent(reference.Driver())
    with pytest.raises(RuntimeError, match="run_sync"):
        agent.send("hi")


def test_nearer_scope_wins_and_metadata_merges_by_key() -> None:
    base = merge_run(RunSettings(), {"model": "a", "metadata": {"x": "1", "y": "1"}, "timeout": 5})
    call = merge_run(base, {"model": "b", "metadata": {"y": "2"}, "timeout": timedelta(seconds=7)})
    assert call.model == "b"
    assert dict(call.metadata) == {"x": "1", "y": "2"}
    assert call.timeout == 7
    assert base.model == "a" and dict(base.metadata) == {"x": "1", "y": "1"}


def test_empty_model_keeps_the_default() -> None:
    assert merge_run(RunSettings(model="a"), {"model": ""}).model == "a"


def test_skills_append_and_conflicting_keys_fail() -> None:
    s = merge_run(RunSettings(), {"skills": ["lint"]})
    s = merge_run(s, {"skills": ["test"]})
    assert s.skills == ("lint", "test")
    with pytest.raises(SkillKeyConflictError):
        merge_run(s, {"skills": [Inline("lint", "another body under the same key")]})


def test_mcp_replaces_empty_clears_none_inherits() -> None:
    s = merge_run(RunSettings(), {"mcp": ["a", "b"]})
    assert merge_run(s, {"mcp": ["c"]}).mcp == ("c",)
    assert merge_run(s, {"mcp": []}).mcp == ()
    assert merge_run(s, {"mcp": None}).mcp == ("a", "b")


def test_policy_replaces_whole() -> None:
    s = merge_run(RunSettings(), {"policy": Policy(messages=MessagePolicy(max_turns=3))})
    s2 = merge_run(s, {"policy": Policy()})
    assert s2.policy.messages.max_turns == 0


def test_identity_replaces_as_a_whole() -> None:
    s = merge_run(RunSettings(), {"identity": Identity(id="u1", tenant="t")})
    assert merge_run(s, {"identity": Identity(id="u2")}).identity == Identity(id="u2")


def test_negative_timeout_is_rejected_naming_the_option() -> None:
    with pytest.raises(ConfigError) as info:
        merge_run(RunSettings(), {"timeout": -1})
    assert info.value.option == "timeout"


async def test_per_call_options_never_change_agent_defaults() -> None:
    agent = Agent(reference.Driver(), model="default-model", metadata={"a": "1"})
    r = await agent.send("hi", model="other", metadata={"b": "2"})
    assert r.model == "other"
    assert agent.settings.run.model == "default-model"
    assert dict(agent.settings.run.metadata) == {"a": "1"}
    r2 = await agent.send("hi")
    assert r2.model == "default-model"


async def test_bad_option_values_fail_through_result_naming_the_option() -> None:
    agent = Agent(reference.Driver())
    with pytest.raises(InvalidPolicyError) as info:
        await agent.send("hi", policy=Policy(messages=MessagePolicy(max_pending=-1)))
    assert info.value.option == "policy.messages.max_pending"


async def test_close_is_idempotent_and_later_sends_fail_through_result() -> None:
    agent = Agent(reference.Driver())
    await agent.close()
    await agent.close()
    stream = agent.send("hi")
    assert stream.run_id
    with pytest.raises(AgentClosedError):
        await stream.result()
    done = await stream.done_event()
    assert isinstance(done.err, AgentClosedError) and done.result is None


async def test_close_cancels_and_drains_admitted_work() -> None:
    gate = reference.Gate()
    agent = Agent(reference.Driver(scenario=reference.Scenario(reference.Turn("start ", gate, "never"))))
    stream = agent.send("hi")
    await gate.reached.wait()
    await asyncio.wait_for(agent.close(), 5)
    assert stream.done
    from adaptor_nb import RunCancelled

    with pytest.raises(RunCancelled) as info:
        await stream.result()
    assert info.value.result is not None and info.value.result.text == "start "


async def test_async_with_closes_the_agent() -> None:
    async with Agent(reference.Driver()) as agent:
        await agent.send("hi")
    assert agent.closed
