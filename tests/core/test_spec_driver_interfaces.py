"""The optional driver interfaces of section 15 (model detector, skill support, stream support, process lifecycle,
message capability resolver), and the resume prerequisite checked before any Thread resource is taken."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adaptor_nb import Agent, InvalidDriverConfigError, MessageState, MessageUpdate, Notice, Timing, skill
from adaptor_nb.driver import (
    Boundary,
    MessageCapabilities,
    MessageCapabilityResolver,
    ModelDetector,
    ModelInfo,
    ProcessLifecycleDriver,
    ProfileLayout,
    SkillCapability,
    SkillSupport,
    StreamCapability,
    StreamSupport,
)
from adaptor_nb.drivers import claude, codex, cursor
from adaptor_nb.drivers import reference as ref

from .helpers import collect, of_type

# -- ModelDetector -------------------------------------------------------------------------------------------


class Detecting(ref.Driver):
    async def list_models(self) -> list[ModelInfo]:
        return [ModelInfo(id="small"), ModelInfo(id="large", default=True)]

    async def detect_model(self) -> str:
        return "small"


async def test_the_detected_model_is_the_default_in_inspection() -> None:
    assert isinstance(Detecting(), ModelDetector)
    inspector = Agent(Detecting()).inspect()
    assert await inspector.detected_model() == "small"
    assert [(m.id, m.default) for m in await inspector.models()] == [("small", True), ("large", False)]
    assert await Agent(ref.Driver()).inspect().detected_model() == ""


async def test_claude_and_codex_detect_the_model_of_their_configuration(tmp_path: Path) -> None:
    (tmp_path / "claude").mkdir()
    (tmp_path / "claude" / "settings.json").write_text('{"model": "opus-from-settings"}')
    driver = claude.Driver(claude.Config(env={"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}))
    assert isinstance(driver, ModelDetector)
    assert await driver.detect_model() == "opus-from-settings"
    assert await claude.Driver(claude.Config(model="explicit")).detect_model() == "explicit"
    (tmp_path / "codex").mkdir()
    (tmp_path / "codex" / "config.toml").write_text('model = "gpt-from-toml"\n')
    assert await codex.Driver(codex.Config(codex_home=str(tmp_path / "codex"))).detect_model() == "gpt-from-toml"


# -- SkillSupport --------------------------------------------------------------------------------------------


class WithProfile(ref.Driver):
    """A driver whose CLI has a profile folder with a skills folder."""

    def __init__(self, root: Path, **fields: Any) -> None:
        super().__init__(**fields)
        self.root = root
        self.instructions: list[str] = []

    def profile_layout(self) -> ProfileLayout:
        return ProfileLayout(
            driver="reference", env_var="", configured_dir=str(self.root), native_dir=str(self.root), skills_dir="s"
        )

    async def run(self, invocation, ctx):  # type: ignore[no-untyped-def]
        self.instructions.append(invocation.instructions)
        return await super().run(invocation, ctx)


class PromptSkills(WithProfile):
    def skill_support(self) -> SkillCapability:
        return SkillCapability(native=False)


async def test_skill_support_decides_between_the_skills_folder_and_the_instructions(tmp_path: Path) -> None:
    body = "Always run the linter."
    native = WithProfile(tmp_path / "a")
    async with Agent(native, skills=[skill.Inline("lint", body)]) as agent:
        await agent.send("go")
        assert (tmp_path / "a" / "s" / "lint" / "SKILL.md").exists() and body not in native.instructions[0]
    prompted = PromptSkills(tmp_path / "b")
    assert isinstance(prompted, SkillSupport)
    async with Agent(prompted, skills=[skill.Inline("lint", body)]) as agent:
        await agent.send("go")
        assert not (tmp_path / "b" / "s").exists() and body in prompted.instructions[0]


def test_built_in_drivers_declare_their_skill_support() -> None:
    assert claude.Driver().skill_support() == SkillCapability(native=True)
    assert codex.Driver().skill_support() == SkillCapability(native=True)


# -- StreamSupport -------------------------------------------------------------------------------------------


def test_stream_capability_is_declared_and_inspectable() -> None:
    partial = cursor.Driver(cursor.Config(partial_output=True))
    assert isinstance(partial, StreamSupport)
    assert Agent(partial).inspect().stream_capability().token_level is True
    assert Agent(cursor.Driver(cursor.Config(partial_output=False))).inspect().stream_capability().token_level is False
    assert claude.Driver().stream_capability().hitl is True
    assert Agent(ref.Driver()).inspect().stream_capability() == StreamCapability()


# -- ProcessLifecycleDriver ----------------------------------------------------------------------------------


class Pooled(ref.Driver):
    def __init__(self) -> None:
        super().__init__()
        self.reclaimed = 0

    async def aclose(self) -> None:
        self.reclaimed += 1


async def test_agent_close_reclaims_what_a_process_lifecycle_driver_owns() -> None:
    driver = Pooled()
    assert isinstance(driver, ProcessLifecycleDriver) and not isinstance(ref.Driver(), ProcessLifecycleDriver)
    agent = Agent(driver)
    await agent.send("go")
    await agent.close()
    assert driver.reclaimed == 1


# -- MessageCapabilityResolver -------------------------------------------------------------------------------


class TurnEndOnly(ref.Driver):
    async def resolve_message_capabilities(self, declared: MessageCapabilities) -> MessageCapabilities:
        # Narrow in-run delivery away, and try (in vain) to add an interrupt.
        return MessageCapabilities(boundaries=frozenset({Boundary.TURN_END}), interrupt=True)


async def test_a_resolver_narrows_message_delivery_for_the_run() -> None:
    assert isinstance(TurnEndOnly(), MessageCapabilityResolver)
    sc = ref.Scenario(ref.Turn(ref.WaitForMessage(), "first"), ref.Turn("second"))
    stream = Agent(TurnEndOnly(scenario=sc)).send("go")
    await stream.send("more", id="m-1")
    events = await collect(stream)
    delivered = [u for u in of_type(events, MessageUpdate) if u.state is MessageState.DELIVERED]
    assert [u.boundary for u in delivered] == [Boundary.TURN_END.value]
    codes = [n.metadata.get("code") for n in of_type(events, Notice)]
    assert "messages.resolved" in codes


async def test_a_resolver_cannot_widen_the_declaration() -> None:
    declared = MessageCapabilities(boundaries=frozenset({Boundary.IN_RUN, Boundary.TURN_END}), interrupt=False)
    gate = ref.Gate()
    stream = Agent(TurnEndOnly(scenario=ref.Scenario(ref.Turn(gate, "x")), messages=declared)).send("go")
    await gate.reached.wait()
    from adaptor_nb import MessageUnsupportedError

    with pytest.raises(MessageUnsupportedError):
        await stream.send("stop", when=Timing.INTERRUPT)
    gate.open()
    await stream.result()


# -- the resume prerequisite ----------------------------------------------------------------------------------


class NoCodec(ref.Driver):
    session_codec = None  # type: ignore[assignment]


class NoFingerprint(ref.Driver):
    def config_fingerprint(self) -> str:
        return ""


@pytest.mark.parametrize("driver_type", [NoCodec, NoFingerprint])
async def test_resume_without_its_prerequisites_is_refused_before_the_thread_is_touched(driver_type: type) -> None:
    driver = driver_type(resume=True)
    assert driver.descriptor().resume
    async with Agent(driver) as agent:
        with pytest.raises(InvalidDriverConfigError, match="resume"):
            await agent.thread("t").send("go")
        assert await agent.store.resolve("t") is None  # no record, no lease
        assert (await agent.send("a one-off run needs no resume")).text  # direct sends are unaffected
