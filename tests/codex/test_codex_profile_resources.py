"""The config profile-resource family on the real Codex CLI against the fake Responses server: a key merged into
the private profile's config.toml takes effect in the model request; agents and hooks fail before launch."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from adaptor_nb import Agent, ConfigError, profile
from adaptor_nb.profile import ResourceKind, ResourceMaterialization
from adaptor_nb.testing import FakeOpenAIServer

from .conftest import DriverFactory


def last_model_body(fake: FakeOpenAIServer) -> dict[str, Any]:
    bodies = [r.body for r in fake.requests if r.is_model_request]
    assert bodies, "Codex sent no model request"
    body = bodies[-1]
    assert isinstance(body, dict)
    return body


async def test_a_config_key_merged_into_config_toml_takes_effect(
    make_driver: DriverFactory, fake: FakeOpenAIServer, codex_home: Path, workspace: Path
) -> None:
    source_before = (codex_home / "config.toml").read_text()
    agent = Agent(
        make_driver(),
        profile=profile.CloneFrom(codex_home, profile.CopySettings(), profile.CopyAuth()),
        profile_resources=profile.Resources(config={"model_reasoning_effort": "high"}),
        workspace=str(workspace),
    )
    assert (await agent.send("think hard").result()).text
    assert (last_model_body(fake).get("reasoning") or {}).get("effort") == "high"
    state = await agent.profile_state()
    written = tomllib.loads((Path(state.profile.directory) / "config.toml").read_text())
    assert written["model_reasoning_effort"] == "high"
    assert written.get("model_provider") == tomllib.loads(source_before).get("model_provider")  # merged, not replaced
    config = next(r for r in state.resources if r.kind is ResourceKind.CONFIG)
    assert config.materialization is ResourceMaterialization.NATIVE_MANAGED and config.managed == (
        "model_reasoning_effort",
    )
    assert (codex_home / "config.toml").read_text() == source_before  # the source profile is not changed
    # the next run with another value gets its own, not the earlier run's merged over it
    low = profile.Resources(config={"model_reasoning_effort": "low"})
    assert (await agent.send("again", profile_resources=low).result()).text
    assert (last_model_body(fake).get("reasoning") or {}).get("effort") == "low"
    await agent.close()


async def test_agents_and_hooks_are_not_materialized_on_codex(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    agent = Agent(make_driver(), profile=profile.Dedicated(), workspace=str(workspace))
    for res, option in (
        (profile.Resources(agents=[profile.AgentSpec("a", "when", "prompt")]), "profile_resources.agents"),
        (profile.Resources(hooks=[profile.HookSpec("Stop", "true")]), "profile_resources.hooks"),
    ):
        with pytest.raises(ConfigError) as info:
            await agent.send("go", profile_resources=res).result()
        assert info.value.option == option and "not materialized" in str(info.value)
    assert not [r for r in fake.requests if r.is_model_request]
    state = await agent.profile_state()
    kinds = {r.kind: r for r in state.resources}
    assert kinds[ResourceKind.AGENTS].materialization is ResourceMaterialization.NOT_MATERIALIZED
    assert kinds[ResourceKind.HOOKS].support.value == "unsupported"
    await agent.close()
