"""Deviations from the specification, each fixed: what the specification says now holds."""

from __future__ import annotations

import pytest

from adaptor_nb import Agent, Done, Dropped, TextDelta, TurnEnd
from adaptor_nb.drivers import reference as ref

from .helpers import of_type

# -- a. a Standby whose consumer stops reading follows the normal backpressure and Dropped rules ----------------


async def test_a_stalled_standby_consumer_does_not_queue_without_bound() -> None:
    sc = ref.Scenario(ref.Turn(ref.Text("x" * 20_000, chunk=1)))
    agent = Agent(ref.Driver(scenario=sc), event_buffer=16)
    sb = await agent.thread("stall").standby()
    it = sb.events().__aiter__()
    await sb.send("go")
    events = [await it.__anext__()]  # subscribed; then the consumer stops reading
    assert sb.current is not None
    await sb.current.result()  # the run ends though nobody reads
    assert sb._events.qsize() <= 16
    while not isinstance(events[-1], Done):
        events.append(await it.__anext__())
    dropped = sum(d.count for d in of_type(events, Dropped))
    deltas = [e for e in of_type(events, TextDelta) if e.text]
    assert dropped > 0 and len(events) < 200
    assert len(deltas) + dropped == 20_000  # every delta is either delivered or counted as dropped
    assert of_type(events, TurnEnd)  # critical events are all delivered
    await sb.close()


# -- b. services= without a service manager invents no endpoint and does not fail ---------------------------------


async def test_services_without_a_manager_run_without_endpoints() -> None:
    from adaptor_nb import Notice
    from adaptor_nb.services import ServiceSpec

    stream = Agent(ref.Driver()).send("hi", services=[ServiceSpec("db", command=["postgres"], endpoint="x")])
    events = [e async for e in stream.events()]
    result = await stream.result()
    assert result.services() == []
    skipped = [n for n in of_type(events, Notice) if n.data.get("phase") == "services_skipped"]
    assert skipped and skipped[0].data["services"] == ["db"]


# -- c. only conflicting duplicate skills fail --------------------------------------------------------------------


async def test_the_same_skill_on_the_agent_and_a_send_is_kept_once() -> None:
    from adaptor_nb import SkillKeyConflictError, skill

    seen: list[str] = []

    class Spy(ref.Driver):
        async def run(self, invocation, ctx):  # type: ignore[no-untyped-def]
            seen.append(invocation.instructions)
            return await super().run(invocation, ctx)

    lint = skill.Inline("lint", "Run the linter first.")
    agent = Agent(Spy(), skills=[lint])
    await agent.send("go", skills=[skill.Inline("lint", "Run the linter first.")])
    assert seen and seen[0].count("Run the linter first.") == 1
    conflicting = agent.send("go", skills=[skill.Inline("lint", "Never lint.")])
    with pytest.raises(SkillKeyConflictError) as info:
        await conflicting.result()
    assert info.value.option == "skills"


# -- d. a Thread uses only tools with a semantic revision ---------------------------------------------------------


def lookup(key: str) -> str:
    """Look a key up."""
    return key.upper()


async def test_a_thread_refuses_a_tool_without_a_revision_before_launch() -> None:
    from adaptor_nb import ConfigError, tool

    launched: list[str] = []

    class Spy(ref.Driver):
        async def run(self, invocation, ctx):  # type: ignore[no-untyped-def]
            launched.append(invocation.prompt)
            return await super().run(invocation, ctx)

    async with Agent(Spy(), tools=[tool.define(lookup)]) as agent:
        await agent.send("one-off runs may use it")
        with pytest.raises(ConfigError, match="revision") as info:
            await agent.thread("t").send("a thread may not").result()
        assert info.value.option == "tools" and launched == ["one-off runs may use it"]
        assert await agent.thread("t").checkpoint() is None
    async with Agent(Spy(), tools=[tool.define(lookup, revision="2")]) as agent:
        await agent.thread("t").send("with a revision it may")
    assert launched[-1] == "with a revision it may"


# -- e. tools= without the tools extra is a ConfigError naming it, before any process starts -----------------------


def test_tools_without_the_extra_name_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from adaptor_nb import ConfigError

    monkeypatch.setitem(sys.modules, "mcp", None)  # as if the extra were not installed
    with pytest.raises(ConfigError, match=r"adaptor_nb\[tools\]") as info:
        Agent(ref.Driver(), tools=[lookup])
    assert info.value.option == "tools" and "mcp" in str(info.value)


# -- f. a tool's exception text never reaches the model -----------------------------------------------------------


async def test_a_tool_failure_reaches_the_model_as_name_and_type_only() -> None:
    from adaptor_nb import Notice, ToolResult

    def leaky() -> str:
        """Fails with a secret in its message."""
        raise RuntimeError("secret-token-123")

    sc = ref.Scenario(ref.Turn(ref.HostCall("leaky")))
    async with Agent(ref.Driver(scenario=sc), tools=[leaky]) as agent:
        stream = agent.send("go")
        events = [e async for e in stream.events()]
    (done,) = of_type(events, ToolResult)
    assert "secret-token-123" not in str(done.result)
    assert done.result["content"] == "tool 'leaky' failed: RuntimeError"
    notices = [n for n in of_type(events, Notice) if n.kind == "tool.error"]
    assert notices and "RuntimeError" in notices[0].text
