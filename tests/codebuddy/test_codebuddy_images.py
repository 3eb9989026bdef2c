"""Images in a prompt reach the model through the real CodeBuddy CLI: the stream-json image blocks become
``image_url`` parts of the chat request's user message."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pictures import png

from adaptor_nb import Agent
from adaptor_nb.testing import ChatReply, FakeChatCompletionsServer

from .conftest import DriverFactory

pytestmark = pytest.mark.codebuddy


async def test_png_bytes_and_a_png_file_reach_the_model_request(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path, tmp_path: Path
) -> None:
    red, blue = png(rgb=(255, 0, 0)), png(2, 5, rgb=(0, 0, 255))
    path = tmp_path / "figure.bin"
    path.write_bytes(blue)
    fake.enqueue(ChatReply.text("red and blue"))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        result = await agent.send("what colours?", images=[red, str(path)]).result()
    assert result.text == "red and blue"
    request = fake.model_requests[-1]
    assert request.prompt == "what colours?"
    assert request.prompt_images == [("image/png", red), ("image/png", blue)]
