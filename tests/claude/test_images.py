"""Images in a prompt reach the model: the Claude CLI gets base64 image blocks on its stream-json user line."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pictures import png

from adaptor_nb import ConfigError, Notice
from adaptor_nb.testing._anthropic import FakeAnthropicServer

from .helpers import drain

pytestmark = pytest.mark.claude


async def test_png_bytes_and_a_png_file_reach_the_model_request(
    agent_factory, fake: FakeAnthropicServer, tmp_path: Path
) -> None:
    red, blue = png(rgb=(255, 0, 0)), png(3, 1, rgb=(0, 0, 255))
    path = tmp_path / "chart.dat"  # the suffix says nothing: the bytes decide the type
    path.write_bytes(blue)
    result = await agent_factory().send("what colours? [[say red and blue]]", images=[red, path]).result()
    assert result.text == "red and blue"
    request = fake.message_requests[-1]
    assert request.prompt == "what colours? [[say red and blue]]"
    assert request.prompt_images == [("image/png", red), ("image/png", blue)]


async def test_the_transcript_and_events_keep_a_digest_and_size_not_the_bytes(
    agent_factory, fake: FakeAnthropicServer
) -> None:
    image = png(4, 4)
    events, result, err = await drain(agent_factory().send("look [[say ok]]", images=[image]))
    assert err is None and result is not None
    items = [i for i in result.transcript() if i.kind == "prompt_images"]
    assert len(items) == 1
    (summary,) = items[0].data["images"]
    assert summary["media_type"] == "image/png" and summary["size"] == len(image) and len(summary["sha256"]) == 64
    carried = [n.item for n in events if isinstance(n, Notice) and n.item is not None]
    assert any(i.kind == "prompt_images" for i in carried)
    assert all(image not in repr(i).encode() and "iVBOR" not in repr(i) for i in carried)


async def test_a_text_file_given_as_an_image_fails_before_the_cli_starts(
    agent_factory, fake: FakeAnthropicServer, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.png"
    notes.write_text("not a picture")
    with pytest.raises(ConfigError) as info:
        await agent_factory().send("look", images=[png(), notes]).result()
    assert info.value.option == "images"
    assert "images[1]" in str(info.value) and "notes.png" in str(info.value)
    assert fake.message_requests == []
