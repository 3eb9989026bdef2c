"""Two small drivers for the skill and profile tests: the scripted reference driver that also records each
Invocation, and one whose "CLI" reads a profile folder (it answers with the skills it finds there)."""

from __future__ import annotations

import os
from typing import Any

from adaptor_nb.driver import DriverOutcome, Invocation, ProfileLayout, RunContext
from adaptor_nb.drivers import reference


class Recording(reference.Driver):
    """The reference driver (no profile folder: skills reach it in the instructions); keeps every Invocation."""

    def __init__(self, **fields: Any) -> None:
        super().__init__(**fields)
        self.invocations: list[Invocation] = []

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        self.invocations.append(invocation)
        return await super().run(invocation, ctx)


class FolderCLI(Recording):
    """A driver whose profile is a folder named by ``FAKE_PROFILE`` (default ``<home>/.fake``); each run answers
    with the skill folders it finds in ``skills/`` of the profile it was pointed at, as a CLI would list them."""

    def __init__(self, home: str, **fields: Any) -> None:
        super().__init__(**fields)
        self.home = home
        self.seen: list[tuple[str, list[str]]] = []

    @property
    def name(self) -> str:
        return "folder"

    def profile_layout(self) -> ProfileLayout:
        native = os.path.join(self.home, ".fake")
        return ProfileLayout(
            driver="folder",
            env_var="FAKE_PROFILE",
            configured_dir=native,
            native_dir=native,
            skills_dir="skills",
            settings_files=("settings.json",),
            auth_files=("credentials.json",),
            mcp=(("state.json", "mcpServers"),),
        )

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        profile = invocation.env.get("FAKE_PROFILE") or os.path.join(self.home, ".fake")
        self.seen.append((profile, skill_folders(os.path.join(profile, "skills"))))
        return await super().run(invocation, ctx)


def skill_folders(skills_dir: str) -> list[str]:
    """The names of the folders holding a SKILL.md in ``skills_dir``."""
    if not os.path.isdir(skills_dir):
        return []
    return sorted(n for n in os.listdir(skills_dir) if os.path.isfile(os.path.join(skills_dir, n, "SKILL.md")))
