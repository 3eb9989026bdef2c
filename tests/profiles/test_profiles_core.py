"""Profile selection on a driver that reads a profile folder: private folders created before launch and removed
by close(), clone options that bring only what they name, profile identity in Thread compatibility, and
profile resources with the family merge rules."""

# ruff: noqa: ASYNC240 - the tests look at profile folders on disk between awaits, on purpose

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from skills._drivers import FolderCLI, Recording

from adaptor_nb import Agent, ConfigError, ThreadIncompatibleError, profile, skill
from adaptor_nb.drivers import reference
from adaptor_nb.threadstore import MemoryStore


def user_profile(home: Path) -> Path:
    """A user's own profile: settings, a login, MCP servers in the state file and one skill."""
    p = home / ".fake"
    (p / "skills" / "mine").mkdir(parents=True)
    (p / "skills" / "mine" / "SKILL.md").write_text("---\nname: mine\ndescription: the user's\n---\nbody\n")
    (p / "settings.json").write_text('{"theme": "dark"}')
    (p / "credentials.json").write_text('{"token": "user-login-token"}')
    (p / "state.json").write_text(json.dumps({"mcpServers": {"docs": {"command": "docs"}}, "history": ["x"]}))
    return p


async def test_dedicated_profile_is_private_created_before_launch_and_removed_by_close(home: Path) -> None:
    user = user_profile(home)
    before = sorted(str(p) for p in user.rglob("*"))
    driver = FolderCLI(str(home))
    agent = Agent(driver, profile=profile.Dedicated(), skills=[skill.Inline("review", "Look for missing tests.")])
    await agent.send("go")
    folder, seen = driver.seen[-1]
    assert folder != str(user) and os.path.isdir(folder)
    assert seen == ["review"]  # the user's "mine" is not visible in the dedicated profile
    assert driver.invocations[-1].env == {"FAKE_PROFILE": folder}
    state = await agent.profile_state()
    assert state.kind.value == "host_managed" and state.profile.directory == folder
    assert state.profile.identity == "dedicated:dedicated" and state.materialized
    await agent.close()
    assert not os.path.exists(folder)
    assert sorted(str(p) for p in user.rglob("*")) == before  # the user's profile is untouched


async def test_a_kept_dedicated_profile_survives_close_and_is_reused_by_name(tmp_path: Path, home: Path) -> None:
    driver = FolderCLI(str(home))
    selection = profile.Dedicated("nb", root=tmp_path / "profiles", keep=True)
    agent = Agent(driver, profile=selection)
    snap = await agent.sync_profile()  # created now, without a run
    folder = snap.profile.directory
    assert folder == str(tmp_path / "profiles" / "folder-nb") and os.path.isdir(folder)
    Path(folder, "session.json").write_text("{}")  # what a CLI would keep there
    await agent.close()
    assert os.path.isdir(folder)
    again = Agent(driver, profile=selection)
    await again.send("go")
    assert driver.seen[-1][0] == folder and Path(folder, "session.json").exists()
    await again.close()


async def test_copy_auth_copies_only_the_credentials(home: Path) -> None:
    user = user_profile(home)
    driver = FolderCLI(str(home))
    agent = Agent(driver, profile=profile.CloneNative(profile.CopyAuth()))
    await agent.send("go")
    folder = Path(driver.seen[-1][0])
    assert sorted(p.name for p in folder.iterdir()) == ["credentials.json"]
    assert not (folder / "credentials.json").is_symlink()
    assert (folder / "credentials.json").read_text() == (user / "credentials.json").read_text()
    assert (folder / "credentials.json").stat().st_mode & 0o077 == 0
    await agent.close()
    assert not folder.exists() and (user / "credentials.json").exists()


async def test_link_auth_links_the_credentials_and_close_keeps_the_original(home: Path) -> None:
    user = user_profile(home)
    driver = FolderCLI(str(home))
    agent = Agent(driver, profile=profile.CloneFrom(user, profile.LinkAuth(), profile.CopySkills()))
    await agent.send("go")
    folder = Path(driver.seen[-1][0])
    assert (folder / "credentials.json").is_symlink()
    assert os.path.realpath(folder / "credentials.json") == os.path.realpath(user / "credentials.json")
    assert driver.seen[-1][1] == ["mine"]
    await agent.close()
    assert (user / "credentials.json").read_text() == '{"token": "user-login-token"}'


async def test_copy_settings_and_copy_mcp_bring_only_their_family(home: Path) -> None:
    user = user_profile(home)
    driver = FolderCLI(str(home))
    a = Agent(driver, profile=profile.CloneFrom(user, profile.CopySettings()))
    await a.send("go")
    assert sorted(p.name for p in Path(driver.seen[-1][0]).iterdir()) == ["settings.json"]
    await a.close()
    b = Agent(driver, profile=profile.CloneFrom(user, profile.CopyMCP()))
    await b.send("go")
    state = json.loads((Path(driver.seen[-1][0]) / "state.json").read_text())
    assert state == {"mcpServers": {"docs": {"command": "docs"}}}  # no history, no settings
    await b.close()


def test_invalid_profile_options_fail_at_construction_naming_the_option(home: Path) -> None:
    with pytest.raises(ConfigError) as info:
        Agent(reference.Driver(), profile=profile.Dedicated())
    assert info.value.option == "profile" and "reference" in str(info.value)
    with pytest.raises(ConfigError) as info:
        Agent(FolderCLI(str(home)), profile=profile.CloneFrom(home / "missing"))
    assert info.value.option == "profile"
    with pytest.raises(TypeError):
        profile.CloneNative(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="exclude"):
        profile.CloneNative(profile.CopyAuth(), profile.LinkAuth())


async def test_profile_identity_enters_thread_compatibility(home: Path) -> None:
    store = MemoryStore()
    driver = FolderCLI(str(home))
    first = Agent(driver, thread_store=store, profile=profile.Dedicated("one"))
    await first.thread("t").send("hello")
    await first.close()
    same = Agent(driver, thread_store=store, profile=profile.Dedicated("one"))
    await same.thread("t", resume_only=True).send("again")
    await same.close()
    other = Agent(driver, thread_store=store, profile=profile.Dedicated("two"))
    with pytest.raises(ThreadIncompatibleError):
        await other.thread("t", resume_only=True).send("again")
    await other.close()


async def test_profile_resources_merge_by_family() -> None:
    driver = Recording()
    base = profile.Resources(skills=[skill.Inline("a", "alpha")], instructions="Agent-level notes.")
    agent = Agent(driver, profile_resources=base)
    await agent.send("go", profile_resources=profile.Resources(skills=[skill.Inline("b", "beta")]))
    inst = driver.invocations[-1].instructions
    assert "alpha" in inst and "beta" in inst and "Agent-level notes." in inst  # skills append, instructions kept
    await agent.send("go", profile_resources=profile.Resources(instructions="Call-level notes."))
    inst = driver.invocations[-1].instructions
    assert "Call-level notes." in inst and "Agent-level notes." not in inst  # instructions replace
    with pytest.raises(ConfigError) as info:
        await agent.send("go", profile_resources=profile.Resources(hooks=[{"event": "stop"}])).result()
    assert info.value.option == "profile_resources.hooks"
    await agent.send("go", profile_resources=profile.Resources(hooks=[], agents=[]))  # empty lists clear: fine
    state = await agent.profile_state()
    kinds = {r.kind.value: r.materialization.value for r in state.resources}
    assert kinds["skills"] == "prompt_injected" and kinds["instructions"] == "prompt_injected"
    assert kinds["hooks"] == "not_materialized"
    await agent.close()


async def test_profile_resources_mcp_replaces_the_family_and_mcp_option_wins() -> None:
    from adaptor_nb import MCPUnsupportedError, mcp

    agent = Agent(Recording())
    res = profile.Resources(mcp=[mcp.Stdio("docs", "docs-mcp")])
    with pytest.raises(MCPUnsupportedError):  # the reference driver has no MCP: the family reached the check
        await agent.send("go", profile_resources=res).result()
    assert (await agent.send("go", profile_resources=res, mcp=[])).text  # an explicit mcp= wins
    await agent.close()


async def test_an_agent_dropped_without_close_leaves_no_private_folder(home: Path) -> None:
    import gc

    agent = Agent(FolderCLI(str(home)), profile=profile.Dedicated())
    folder = (await agent.sync_profile()).profile.directory
    assert os.path.isdir(folder)
    del agent
    gc.collect()
    assert not os.path.exists(folder)


async def test_agents_hooks_and_config_are_checked_before_launch() -> None:
    driver = Recording()  # declares no profile folder: the families cannot land anywhere
    agent = Agent(driver)
    bad = [
        (profile.Resources(agents=[{"name": "a b", "description": "d", "prompt": "p"}]), "profile_resources.agents"),
        (profile.Resources(agents=[profile.AgentSpec("ok", "when", "prompt")]), "profile_resources.agents"),
        (profile.Resources(hooks=[profile.HookSpec("Stop", "")]), "profile_resources.hooks"),
        (profile.Resources(config={"model": "m"}), "profile_resources.config"),
    ]
    for res, option in bad:
        with pytest.raises(ConfigError) as info:
            await agent.send("go", profile_resources=res).result()
        assert info.value.option == option
    assert driver.invocations == []  # nothing launched
    state = await agent.profile_state()
    assert {r.kind.value: r.support.value for r in state.resources}["config"] == "unsupported"
    await agent.close()
