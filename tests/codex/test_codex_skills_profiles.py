"""Skills and profiles on the real Codex CLI against the fake Responses server: a skill lands in the profile's
``skills/`` folder and Codex lists it to the model in its skills instructions; a dedicated profile (cloned from the
test's CODEX_HOME with its settings and credentials only) is isolated from the user's HOME and removed by close()."""

# ruff: noqa: ASYNC240 - the tests look at profile folders on disk between awaits, on purpose

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from adaptor_nb import Agent, profile, skill
from adaptor_nb.testing import FakeOpenAIServer

from .conftest import DriverFactory

REVIEW = skill.Inline(
    "review-checklist",
    "Check that every new function has a test.",
    description="Use when reviewing a change for missing tests",
)


def request_text(fake: FakeOpenAIServer) -> str:
    bodies = [r.body for r in fake.requests if r.is_model_request]
    assert bodies, "Codex sent no model request"
    return json.dumps(bodies[-1])


async def test_a_skill_in_codex_home_is_listed_to_the_model(
    make_driver: DriverFactory, fake: FakeOpenAIServer, codex_home: Path, workspace: Path
) -> None:
    agent = Agent(make_driver(), skills=[REVIEW], workspace=str(workspace))
    result = await agent.send("review my change").result()
    assert result.text
    text = request_text(fake)
    assert "review-checklist" in text and "missing tests" in text
    folder = codex_home / "skills" / "review-checklist"
    assert (folder / "SKILL.md").is_file()
    await agent.close()
    assert not folder.exists()


async def test_a_cloned_profile_is_private_isolated_from_home_and_removed_by_close(
    make_driver: DriverFactory, fake: FakeOpenAIServer, codex_home: Path, home: Path, workspace: Path
) -> None:
    personal = home / ".codex" / "skills" / "personal"
    personal.mkdir(parents=True)
    (personal / "SKILL.md").write_text("---\nname: personal\ndescription: the user's own skill\n---\nsecret sauce\n")
    home_before = sorted(str(p) for p in home.rglob("*"))
    source_before = sorted(str(p) for p in codex_home.rglob("*"))
    agent = Agent(
        make_driver(),
        profile=profile.CloneFrom(codex_home, profile.CopySettings(), profile.CopyAuth()),
        skills=[REVIEW],
        workspace=str(workspace),
    )
    assert (await agent.send("review my change").result()).text
    text = request_text(fake)
    assert "review-checklist" in text and "the user's own skill" not in text
    state = await agent.profile_state()
    folder = state.profile.directory
    assert state.profile.env_var == "CODEX_HOME" and folder != str(codex_home)
    assert os.path.isfile(os.path.join(folder, "config.toml"))
    assert os.path.isfile(os.path.join(folder, "skills", "review-checklist", "SKILL.md"))
    await agent.close()
    assert not os.path.exists(folder)
    assert sorted(str(p) for p in home.rglob("*")) == home_before
    assert sorted(str(p) for p in codex_home.rglob("*")) == source_before  # the source profile is untouched


async def test_a_dedicated_profile_starts_empty(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path, codex_bin: str, home: Path
) -> None:
    from adaptor_nb.drivers.codex._home import OFFLINE_SETTINGS, provider_settings

    from .conftest import API_KEY_ENV

    settings: dict[str, Any] = {
        **OFFLINE_SETTINGS,  # the empty profile has no config.toml: keep Codex offline from the command line
        **provider_settings(base_url=fake.base_url, env_key=API_KEY_ENV, request_max_retries=0, stream_max_retries=0),
    }
    agent = Agent(make_driver(codex_home=None, config=settings), profile=profile.Dedicated(), workspace=str(workspace))
    assert (await agent.send("hello").result()).text
    folder = (await agent.profile_state()).profile.directory
    assert os.path.isdir(folder) and not os.path.exists(home / ".codex")
    await agent.close()
    assert not os.path.exists(folder)
