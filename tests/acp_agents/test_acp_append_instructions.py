"""``append_instructions`` on an ACP agent (CodeBuddy with --acp): ACP has no system-prompt field, so the
instructions, then the appended text, go ahead of the first prompt of the agent's session, and only there."""

from __future__ import annotations

from pathlib import Path

from adaptor_nb import Agent
from adaptor_nb.testing import ChatReply, FakeChatCompletionsServer

from .conftest import NetworkTripwire
from .test_acp_codebuddy import codebuddy_driver


async def test_the_appended_text_goes_ahead_of_the_first_prompt_only(
    codebuddy_bin: str, fake: FakeChatCompletionsServer, home: Path, tmp_path: Path, tripwire: NetworkTripwire
) -> None:
    fake.enqueue(ChatReply.text("one"))
    fake.enqueue(ChatReply.text("two"))
    driver = codebuddy_driver(codebuddy_bin, home, fake, tripwire)
    async with Agent(driver, workspace=str(tmp_path), instructions="Be brief.", append_instructions="Cite files.") as a:
        thread = a.thread("t")
        await thread.send("first question").result()
        await thread.send("second question").result()
    prompts = [r.prompt for r in fake.model_requests if r.prompt]
    assert prompts[0] == "Be brief.\n\nCite files.\n\nfirst question"
    assert prompts[-1] == "second question"
