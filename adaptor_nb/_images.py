"""Images in a prompt: PNG or JPEG bytes or a file, typed by their magic bytes and checked before any process starts.

An image travels to the driver whole (``ImageInput.data``); everywhere else (events, transcripts, cassette keys)
it is named by ``summary()``: its media type, size and SHA-256, never its bytes.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._errors import ConfigError
from ._result import TranscriptItem

OPTION = "images"
PROMPT_IMAGES = "prompt_images"
PNG = "image/png"
JPEG = "image/jpeg"
_SIGNATURES: tuple[tuple[bytes, str], ...] = ((b"\x89PNG\r\n\x1a\n", PNG), (b"\xff\xd8\xff", JPEG))


@dataclass(frozen=True)
class ImageInput:
    """One image of a prompt: its bytes and media type (sniffed from the bytes, never from a file name)."""

    data: bytes = field(repr=False)
    media_type: str
    source: str = ""
    """The path it was read from; empty for bytes given directly."""

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def base64(self) -> str:
        """The bytes as base64 text (what stream-json image blocks and ACP image blocks carry)."""
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        """The image as a ``data:`` URL (what OpenAI-style image inputs take)."""
        return f"data:{self.media_type};base64,{self.base64()}"

    def summary(self) -> dict[str, Any]:
        """What records and events keep of the image: media type, size and SHA-256 (no bytes)."""
        return {"media_type": self.media_type, "size": self.size, "sha256": self.sha256}


def sniff(data: bytes) -> str:
    """The media type of ``data`` from its signature (``image/png`` or ``image/jpeg``), or "" when it is neither."""
    for magic, media_type in _SIGNATURES:
        if data.startswith(magic):
            return media_type
    return ""


def _label(item: Any) -> str:
    if isinstance(item, bytes | bytearray | memoryview):
        return f"{len(item)} bytes"
    return repr(os.fspath(item)) if isinstance(item, str | os.PathLike) else type(item).__name__


def _read(index: int, item: Any) -> ImageInput:
    where = f"images[{index}] ({_label(item)})"
    if isinstance(item, bytes | bytearray | memoryview):
        data, source = bytes(item), ""
    elif isinstance(item, str | os.PathLike):
        path = os.fspath(item)
        if not isinstance(path, str):
            path = os.fsdecode(path)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            msg = f"{where}: no such file; pass an existing PNG or JPEG file or its bytes"
            raise ConfigError(msg, option=OPTION) from None
        except OSError as exc:
            raise ConfigError(f"{where}: cannot be read: {exc.strerror or exc}", option=OPTION) from None
        source = path
    else:
        raise ConfigError(
            f"{where}: an image is PNG or JPEG bytes or a path (str or os.PathLike), got {type(item).__name__}",
            option=OPTION,
        )
    media_type = sniff(data)
    if not media_type:
        head = data[:8].hex(" ") or "empty"
        raise ConfigError(
            f"{where} is not a PNG or JPEG image (its first bytes are {head}); only PNG and JPEG are accepted",
            option=OPTION,
        )
    return ImageInput(data=data, media_type=media_type, source=source)


def resolve_images(value: Any) -> tuple[ImageInput, ...]:
    """Read and type every item of ``images=``; a ConfigError names the option and the item that is wrong."""
    if value is None:
        return ()
    if isinstance(value, str | bytes | bytearray | memoryview | os.PathLike) or not isinstance(value, Sequence):
        raise ConfigError(
            f"images must be a list of images (PNG/JPEG bytes or paths), got {type(value).__name__}: "
            "wrap a single image as images=[image]",
            option=OPTION,
        )
    return tuple(_read(i, item) for i, item in enumerate(value))


def image_summaries(images: Sequence[ImageInput]) -> list[dict[str, Any]]:
    """The record of a prompt's images: one ``summary()`` per image, in order."""
    return [image.summary() for image in images]


def prompt_images_item(images: Sequence[ImageInput]) -> TranscriptItem:
    """The transcript entry of a prompt's images (kind ``prompt_images``): a summary per image, no bytes."""
    words = ", ".join(f"{i.media_type} {i.size} bytes sha256:{i.sha256[:12]}" for i in images)
    return TranscriptItem(kind=PROMPT_IMAGES, text=words, data={"images": image_summaries(images)})


__all__ = [
    "JPEG",
    "PNG",
    "PROMPT_IMAGES",
    "ImageInput",
    "image_summaries",
    "prompt_images_item",
    "resolve_images",
    "sniff",
]
