"""The agents, hooks and config profile-resource families on the real Claude Code CLI against the fake Anthropic
server: an agent file lands in the private profile's agents/ folder and the CLI lists it, a hook in its
settings.json runs, a config key in settings.json takes effect, and the shared profile is never written."""

# ruff: noqa: ASYNC240 - the tests look at profile folders on disk between awaits, on purpose

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from adaptor_nb import ConfigError, Notice, profile
from adaptor_nb.profile import ResourceKind, ResourceMaterialization
from adaptor_nb.testing._anthropic import FakeAnthropicServer, Reply

REVIEWER = profile.AgentSpec(
    "test-gap-finder",
    "Use to find functions that have no test",
    "You list the functions of a diff that no test calls.",
    tools=("Read", "Grep"),
)


def init_frame(events: list[Any]) -> dict[str, Any]:
    for e in events:
        if isinstance(e, Notice) and e.metadata.get("code") == "claude.init" and isinstance(e.data, dict):
            return e.data
    return {}


async def collect(stream: Any) -> list[Any]:
    return [e async for e in stream.events()]


def all_request_text(fake: FakeAnthropicServer) -> str:
    return "\n".join(json.dumps(r.body) for r in fake.requests)


async def test_an_agent_lands_in_the_private_profile_and_the_cli_offers_it(
    agent_factory: Any, make_config: Any, fake: FakeAnthropicServer, home: Path
) -> None:
    fake.enqueue(Reply.text("ok"))
    res = profile.Resources(agents=[REVIEWER])
    agent = agent_factory(make_config(bare=False), profile=profile.Dedicated(), profile_resources=res)
    stream = agent.send("which functions lack tests?")
    events = await collect(stream)
    assert (await stream.result()).text == "ok"
    assert "test-gap-finder" in [str(a) for a in init_frame(events).get("agents") or []]
    assert "Use to find functions that have no test" in all_request_text(fake)  # the model is told of it
    state = await agent.profile_state()
    folder = state.profile.directory
    text = (Path(folder) / "agents" / "test-gap-finder.md").read_text()
    assert text.startswith("---\nname: ") and "no test calls" in text
    agents = next(r for r in state.resources if r.kind is ResourceKind.AGENTS)
    assert agents.materialization is ResourceMaterialization.NATIVE_MANAGED and agents.managed == ("test-gap-finder",)
    assert not (home / ".claude" / "agents").exists()
    # a later run without the family leaves it out again (None inherits the Agent's, here none)
    fake.enqueue(Reply.text("ok"))
    await agent.send("again", profile_resources=profile.Resources(agents=[])).result()
    assert not (Path(folder) / "agents" / "test-gap-finder.md").exists()


async def test_a_user_prompt_submit_hook_runs_and_a_config_key_takes_effect(
    agent_factory: Any, make_config: Any, fake: FakeAnthropicServer, tmp_path: Path
) -> None:
    marker = tmp_path / "hook-ran.txt"
    hook = profile.HookSpec("UserPromptSubmit", f"echo submitted >> {marker}")
    res = profile.Resources(hooks=[hook], config={"model": "claude-haiku-4-5"})
    fake.enqueue(Reply.text("ok"))
    agent = agent_factory(make_config(bare=False), profile=profile.Dedicated(), profile_resources=res)
    assert (await agent.send("hello").result()).text == "ok"
    assert marker.read_text().strip() == "submitted"
    assert any(r.model == "claude-haiku-4-5" for r in fake.requests), [r.model for r in fake.requests]
    state = await agent.profile_state()
    settings = json.loads((Path(state.profile.directory) / "settings.json").read_text())
    assert settings["model"] == "claude-haiku-4-5"
    assert settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["type"] == "command"
    kinds = {r.kind: r for r in state.resources}
    assert kinds[ResourceKind.HOOKS].managed == ("UserPromptSubmit:*",)
    assert kinds[ResourceKind.CONFIG].managed == ("model",)
    assert kinds[ResourceKind.CONFIG].materialization is ResourceMaterialization.NATIVE_MANAGED


async def test_a_post_tool_use_hook_runs_after_a_scripted_tool_call(
    agent_factory: Any, make_config: Any, fake: FakeAnthropicServer, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "notes.txt").write_text("hello from the workspace\n")
    marker = tmp_path / "post-tool.txt"
    hook = profile.HookSpec("PostToolUse", f"echo read-done >> {marker}", matcher="Read")
    fake.enqueue(Reply.tool("Read", {"file_path": str(workspace / "notes.txt")}))
    fake.enqueue(Reply.text("read it"))
    agent = agent_factory(
        make_config(bare=False), profile=profile.Dedicated(), profile_resources=profile.Resources(hooks=[hook])
    )
    assert (await agent.send("read notes.txt").result()).text == "read it"
    assert marker.read_text().strip() == "read-done"


async def test_the_families_fail_before_launch_on_the_shared_profile(
    agent_factory: Any, make_config: Any, fake: FakeAnthropicServer, home: Path
) -> None:
    agent = agent_factory(make_config(bare=False))
    for res, option in (
        (profile.Resources(agents=[REVIEWER]), "profile_resources.agents"),
        (profile.Resources(hooks=[profile.HookSpec("Stop", "true")]), "profile_resources.hooks"),
        (profile.Resources(config={"model": "x"}), "profile_resources.config"),
    ):
        with pytest.raises(ConfigError) as info:
            await agent.send("go", profile_resources=res).result()
        assert info.value.option == option and "private profile" in str(info.value)
    assert fake.requests == [] and not os.path.exists(home / ".claude" / "settings.json")
