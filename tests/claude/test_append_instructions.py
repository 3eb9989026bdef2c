"""``append_instructions`` on the real Claude CLI: appended to the CLI's system prompt (``--append-system-prompt``)
after ``instructions``, with the CLI's own prompt kept."""

from __future__ import annotations

import pytest

from adaptor_nb.testing._anthropic import FakeAnthropicServer

pytestmark = pytest.mark.claude


async def test_the_appended_text_ends_the_system_prompt_after_the_instructions(
    agent_factory, fake: FakeAnthropicServer
) -> None:
    agent = agent_factory(instructions="Answer in French.", append_instructions="Never use tables.")
    await agent.send("hi [[say bonjour]]", append_instructions="Sign as Ada.").result()
    system = fake.message_requests[-1].system_text
    assert system.rstrip().endswith("Answer in French.\n\nNever use tables.\n\nSign as Ada.")
    default = system[: system.index("Answer in French.")]
    assert "Claude" in default  # the CLI's own system prompt is still there, first
