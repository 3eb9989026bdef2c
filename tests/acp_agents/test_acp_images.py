"""Images in a prompt reach the model through real ACP agents (CodeBuddy with --acp, Qwen Code): the driver sends
ACP ``image`` content blocks, which the agents turn into ``image_url`` parts of the chat request."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from _pictures import png
from _support import drain

from adaptor_nb import Agent, ConfigError, TextDelta
from adaptor_nb.drivers import acp
from adaptor_nb.testing import ChatReply, FakeChatCompletionsServer

from .conftest import DriverFactory, NetworkTripwire
from .test_acp_codebuddy import codebuddy_driver


def images_of(server: FakeChatCompletionsServer) -> list[tuple[str, bytes]]:
    found = [r.prompt_images for r in server.model_requests if r.prompt_images]
    return found[-1] if found else []


async def test_codebuddy_acp_sends_the_images_to_the_model(
    codebuddy_bin: str, fake: FakeChatCompletionsServer, home: Path, tmp_path: Path, tripwire: NetworkTripwire
) -> None:
    red, blue = png(rgb=(255, 0, 0)), png(3, 2, rgb=(0, 0, 255))
    path = tmp_path / "blue.img"
    path.write_bytes(blue)
    fake.enqueue(ChatReply.text("red and blue"))
    async with Agent(codebuddy_driver(codebuddy_bin, home, fake, tripwire), workspace=str(tmp_path)) as agent:
        result = await agent.send("what colours?", images=[red, path]).result()
    assert result.text == "red and blue"
    assert images_of(fake) == [("image/png", red), ("image/png", blue)]


async def test_qwen_sends_the_images_to_the_model(
    make_qwen: DriverFactory, fake: FakeChatCompletionsServer, home: Path, tmp_path: Path
) -> None:
    picture = png(rgb=(0, 128, 0))
    fake.enqueue(ChatReply.text("green"))
    driver = make_qwen()
    # Qwen Code sends images only to a model it knows takes them (else a "[image: image/png]" placeholder): the
    # fake model is declared multimodal in the settings the fixture wrote.
    settings = home / ".qwen" / "settings.json"
    data = json.loads(settings.read_text())
    data["model"]["generationConfig"]["modalities"] = {"image": True}
    settings.write_text(json.dumps(data))
    async with Agent(driver, workspace=str(tmp_path)) as agent:
        result = await agent.send("what colour?", images=[picture]).result()
    assert result.text == "green"
    assert images_of(fake) == [("image/png", picture)]


FAKE = str(Path(__file__).with_name("fake_agent.py"))


async def test_an_agent_without_prompt_image_support_is_refused_before_the_prompt(tmp_path: Path) -> None:
    driver = acp.Driver(acp.Config(command=[sys.executable, FAKE, "plain"], name="fake", grace_period=0.5))
    async with Agent(driver, workspace=str(tmp_path)) as agent:
        events, result, err = await drain(agent.send("look", images=[png()]))
        again = await agent.send("look").result()  # the same agent without images still answers
    assert result is None and isinstance(err, ConfigError)
    assert err.option == "images" and err.details == {"capability": "promptCapabilities.image"}
    assert "'fake'" in str(err)
    assert not [e for e in events if isinstance(e, TextDelta)]  # no prompt reached the agent
    assert again.text == "whole answer"
