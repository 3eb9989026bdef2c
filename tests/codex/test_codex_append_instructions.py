"""``append_instructions`` on the real Codex CLI: it joins the developer instructions after ``instructions``; the
CLI's base instructions stay."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaptor_nb import Agent
from adaptor_nb.testing import FakeOpenAIServer

from .conftest import DriverFactory

pytestmark = pytest.mark.codex


async def test_the_appended_text_follows_the_instructions_in_the_developer_message(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(
        make_driver(), workspace=str(workspace), instructions="Answer in French.", append_instructions="No tables."
    ) as agent:
        await agent.send("hi", append_instructions="Sign as Ada.").result()
    developer = "\n".join(fake.model_requests[0].texts("developer"))
    assert "Answer in French.\n\nNo tables.\n\nSign as Ada." in developer
    assert len(developer) > len("Answer in French.\n\nNo tables.\n\nSign as Ada.") + 200  # Codex's own text stays
