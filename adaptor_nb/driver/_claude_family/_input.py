"""The content of a stream-json user line: plain text, or image blocks followed by the text."""

from __future__ import annotations

from typing import Any

from ..._images import ImageInput


def image_block(image: ImageInput) -> dict[str, Any]:
    """An Anthropic ``image`` content block carrying the bytes as base64."""
    return {"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.base64()}}


def user_content(text: str, images: tuple[ImageInput, ...] = ()) -> str | list[dict[str, Any]]:
    """A user message's ``content``: the text alone, or (with images) the image blocks then one text block, so the
    prompt stays the message's last text block as the model and the CLI expect."""
    if not images:
        return text
    return [*(image_block(i) for i in images), {"type": "text", "text": text}]
