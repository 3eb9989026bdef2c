"""The parts of the specification that packages build on: RunSettings/AgentSettings setters and option objects
(§3.4), identity_from_context (§4), the schema generation options (§9), cap_message_turns (§16) and
MessageError.err (§6.1)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from adaptor_nb import (
    Agent,
    AgentSettings,
    ConfigError,
    Identity,
    InvalidOutputSchemaError,
    MessageError,
    MessageFailure,
    MessagePolicy,
    Policy,
    RunSettings,
    SkillKeyConflictError,
    identity_from_context,
)
from adaptor_nb.drivers import reference as ref
from adaptor_nb.workspace import SharedWorkspace, WorkspaceLease, WorkspaceReleaseMode, WorkspaceRequest

# -- §3.4 setters merge like their options ------------------------------------------------------------------


def test_run_setters_merge_like_the_options() -> None:
    s = RunSettings().set_model("a").set_metadata("x", "1").set_metadata("y", "2").set_timeout(5)
    assert (s.model, dict(s.metadata), s.timeout) == ("a", {"x": "1", "y": "2"}, 5.0)
    assert s.set_model("").model == "a"  # an empty model keeps the default, as model="" does
    assert s.set_metadata("x", "3").metadata == {"x": "3", "y": "2"}
    assert s.set_mcp_servers([]).mcp == ()  # an empty set clears
    assert s.set_spawn().spawn and s.set_identity(Identity(id="u")).identity.id == "u"
    assert s.model == "a" and not s.spawn  # a setter never changes the receiver


def test_run_setters_validate_like_the_options() -> None:
    with pytest.raises(ConfigError) as info:
        RunSettings().set_timeout(-1)
    assert info.value.option == "timeout"


def test_add_skills_appends_and_refuses_a_conflicting_key() -> None:
    s = RunSettings().add_skills("lint").add_skills("fmt")
    assert s.skills == ("lint", "fmt")
    from adaptor_nb import skill

    with pytest.raises(SkillKeyConflictError):
        s.add_skills(skill.Inline("lint", "other body"))


def test_agent_settings_setters_and_promoted_run_setters() -> None:
    a = AgentSettings().set_event_buffer(16).set_blocking_events().set_model("m").set_metadata("k", "v")
    assert (a.event_buffer, a.blocking_events, a.run.model, dict(a.run.metadata)) == (16, True, "m", {"k": "v"})
    with pytest.raises(ConfigError):
        AgentSettings().set_event_buffer(0)


@dataclass
class Tagged:
    """A package's own option: sets metadata through the setter surface."""

    key: str
    value: str

    def apply_run(self, settings: RunSettings) -> RunSettings:
        return settings.set_metadata(self.key, self.value)


@dataclass
class SmallBuffer:
    def apply_new(self, settings: AgentSettings) -> AgentSettings:
        return settings.set_event_buffer(8)


async def test_option_objects_apply_after_keywords_at_both_scopes() -> None:
    agent = Agent(ref.Driver(), SmallBuffer(), Tagged("team", "a"), metadata={"team": "kw", "x": "1"})
    assert agent.settings.event_buffer == 8
    assert agent.settings.run.metadata == {"team": "a", "x": "1"}
    stream = agent.send("hi", Tagged("run", "r"))
    assert stream._ex.settings.metadata == {"team": "a", "x": "1", "run": "r"}
    await stream.result()
    assert agent.settings.run.metadata == {"team": "a", "x": "1"}  # a call never changes the defaults


def test_a_construction_only_option_object_is_refused_by_send() -> None:
    async def go() -> None:
        Agent(ref.Driver()).send("hi", SmallBuffer())  # type: ignore[arg-type]

    with pytest.raises(TypeError, match="construction-only"):
        asyncio.run(go())


def test_a_non_option_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="not an option object"):
        Agent(ref.Driver(), object())  # type: ignore[arg-type]


class Review(BaseModel):
    verdict: str


class Broken:
    """Not a type pydantic can describe."""


@dataclass
class SchemaOption:
    schema: Any

    def apply_run(self, settings: RunSettings) -> RunSettings:
        return settings.set_output_schema(self.schema)


async def test_an_option_object_can_ask_for_structured_output() -> None:
    sc = ref.Scenario(ref.Turn('{"verdict": "ok"}'))
    result = await Agent(ref.Driver(scenario=sc, native_structured_output=False)).send("review", SchemaOption(Review))
    assert result.decode(Review) == Review(verdict="ok")


def test_a_schema_derivation_error_is_sticky() -> None:
    s = RunSettings().set_output_schema(Broken)
    assert isinstance(s.output_schema_error, InvalidOutputSchemaError)
    later = s.set_output_schema(Review)
    assert later.output_schema is not None and later.output_schema_error is s.output_schema_error


async def test_a_sticky_schema_error_ends_the_run_before_launch() -> None:
    launched: list[str] = []

    class Spy(ref.Driver):
        async def run(self, invocation, ctx):  # type: ignore[no-untyped-def]
            launched.append(invocation.prompt)
            return await super().run(invocation, ctx)

    stream = Agent(Spy()).send("review", SchemaOption(Broken), SchemaOption(Review))
    with pytest.raises(InvalidOutputSchemaError):
        await stream.result()
    assert launched == []


# -- §16 cap_message_turns in a composite call option --------------------------------------------------------


@dataclass
class Budget:
    remaining: int

    def apply_run(self, settings: RunSettings) -> RunSettings:
        return settings.cap_message_turns(self.remaining)


async def test_a_composite_option_lowers_the_turn_budget_after_the_callers_options() -> None:
    sc = ref.Scenario(*(ref.Turn(f"t{i}", auto_continue=True) for i in range(5)))
    policy = Policy(messages=MessagePolicy(max_turns=4, max_pending=3))
    stream = Agent(ref.Driver(scenario=sc)).send("go", Budget(2), policy=policy)
    assert stream._ex.settings.policy.messages.max_pending == 3
    assert (await stream.result()).turns == 2


# -- §4 identity_from_context --------------------------------------------------------------------------------


class RecordingWorkspaces:
    def __init__(self) -> None:
        self.seen: list[Identity | None] = []

    async def resolve(self, request: WorkspaceRequest) -> WorkspaceLease:
        self.seen.append(identity_from_context())
        return WorkspaceLease(path=request.base_cwd)

    async def release(self, lease: WorkspaceLease, mode: WorkspaceReleaseMode) -> None:
        self.seen.append(identity_from_context())


async def test_host_hooks_read_the_effective_identity(tmp_path: Any) -> None:
    manager = RecordingWorkspaces()
    agent = Agent(
        ref.Driver(),
        workspace=str(tmp_path),
        workspace_spec=SharedWorkspace(),
        workspace_manager=manager,
        identity=Identity(id="agent-default"),
    )
    await agent.send("hi", identity=Identity(id="alice", tenant="t1")).result()
    assert manager.seen and all(i == Identity(id="alice", tenant="t1") for i in manager.seen)
    assert identity_from_context() is None  # outside a run


# -- §9 schema generation options ----------------------------------------------------------------------------


class Inner(BaseModel):
    name: str


class Outer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    inner: Inner
    note: str = Field(default="", json_schema_extra={"required": True})
    size: int


class Node(BaseModel):
    children: list[Node]


def _schema(**options: Any) -> dict[str, Any]:
    from adaptor_nb._schema import resolve_schema

    return resolve_schema(Outer, **options).schema


def test_inline_references_removes_refs() -> None:
    assert "$defs" in _schema()
    inlined = _schema(inline_references=True)
    assert "$defs" not in inlined and "$ref" not in str(inlined)
    assert inlined["properties"]["inner"]["properties"]["name"]["type"] == "string"


def test_inline_references_refuses_a_recursive_type() -> None:
    from adaptor_nb._schema import resolve_schema

    with pytest.raises(InvalidOutputSchemaError, match="recursive"):
        resolve_schema(Node, inline_references=True)


def test_allow_additional_properties_relaxes_strict_objects() -> None:
    assert _schema()["additionalProperties"] is False
    assert "additionalProperties" not in _schema(allow_additional_properties=True)


def test_require_explicit_tags_requires_only_marked_fields() -> None:
    assert set(_schema()["required"]) == {"inner", "size"}
    explicit = _schema(require_explicit_tags=True)
    assert explicit["required"] == ["note"]
    assert "required" not in explicit["properties"]["note"]  # the marker never reaches the provider


def test_generation_options_leave_a_given_schema_alone() -> None:
    from adaptor_nb._schema import resolve_schema

    given = {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}
    assert resolve_schema(given, allow_additional_properties=True).schema == given


async def test_schema_options_reach_the_provider_through_send() -> None:
    seen: dict[str, Any] = {}

    class Spy(ref.Driver):
        async def run(self, invocation, ctx):  # type: ignore[no-untyped-def]
            seen["schema"] = invocation.output_schema.schema
            return await super().run(invocation, ctx)

    stream = Agent(Spy()).send("go", schema=Outer, schema_inline_references=True, schema_return_invalid=True)
    await stream.result()
    assert "$defs" not in seen["schema"]


# -- §6.1 MessageError.err -----------------------------------------------------------------------------------


async def test_message_error_carries_its_cause() -> None:
    gate = ref.Gate()
    policy = Policy(messages=MessagePolicy(max_pending=1))
    stream = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(gate, "done")))).send("go", policy=policy)
    await stream.send("first")
    waiting = asyncio.ensure_future(stream.send("second"))
    # FIFO: the send's first step (which blocks on the full queue) runs before the cancel.
    asyncio.get_running_loop().call_soon(stream.cancel)
    with pytest.raises(MessageError) as info:
        await waiting
    assert info.value.reason is MessageFailure.CANCELLED
    assert isinstance(info.value.err, asyncio.CancelledError) and info.value.__cause__ is info.value.err
    assert info.value.text == "second"
    plain = MessageError("refused", text="t")
    assert plain.err is None
