"""Images in a prompt reach the model through the real Codex CLI: ``turn/start`` image items become input_image
parts of the user message, before the prompt's text."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pictures import png

from adaptor_nb import Agent
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._openai import Reply

from .conftest import DriverFactory

pytestmark = pytest.mark.codex


async def test_png_bytes_and_a_png_file_reach_the_model_request(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    red, green = png(rgb=(255, 0, 0)), png(1, 3, rgb=(0, 255, 0))
    path = tmp_path / "plot"
    path.write_bytes(green)
    fake.enqueue(Reply.text("red and green"))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        result = await agent.send("what colours?", images=[red, path]).result()
    assert result.text == "red and green"
    request = fake.model_requests[0]
    assert request.prompt == "what colours?"
    assert request.prompt_images == [("image/png", red), ("image/png", green)]
    assert [i.kind for i in result.transcript()].count("prompt_images") == 1


async def test_images_go_with_the_first_turn_only(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        thread = agent.thread("t")
        await thread.send("look", images=[png()]).result()
        await thread.send("and now?").result()
    first, second = fake.model_requests[0], fake.model_requests[-1]
    assert len(first.prompt_images) == 1
    assert second.prompt == "and now?" and second.prompt_images == []
