"""A skill on the real CodeBuddy Code CLI: it lands in a dedicated profile's ``skills/`` folder and the CLI shows
it to the model; close() removes the folder."""

# ruff: noqa: ASYNC240 - the test looks at profile folders on disk between awaits, on purpose

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from adaptor_nb import Agent, profile, skill
from adaptor_nb.testing import ChatReply, FakeChatCompletionsServer

from .conftest import DriverFactory

pytestmark = pytest.mark.codebuddy


async def test_a_skill_in_a_dedicated_profile_reaches_the_model(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path, home: Path
) -> None:
    fake.enqueue(ChatReply.text("ok"))
    review = skill.Inline("review-checklist", "Check every new function has a test.", description="Review for tests")
    agent = Agent(make_driver(), profile=profile.Dedicated(), skills=[review], workspace=str(workspace))
    assert (await agent.send("review my change").result()).text == "ok"
    folder = (await agent.profile_state()).profile.directory
    assert os.path.isfile(os.path.join(folder, "skills", "review-checklist", "SKILL.md"))
    bodies = [json.dumps(r.body) for r in fake.requests if isinstance(r.body, dict) and r.body.get("messages")]
    assert bodies and any("review-checklist" in b for b in bodies)
    await agent.close()
    assert not os.path.exists(folder)
    assert not (home / ".codebuddy" / "skills").exists()
