"""``images=`` on every send: read and typed by their bytes before launch, refused by drivers that cannot take them,
handed whole to drivers that can, and recorded as a digest and size only."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from _pictures import JPEG, png

from adaptor_nb import Agent, ConfigError, Done, run_as, run_sync
from adaptor_nb.driver import Descriptor, DriverOutcome, Invocation, RunContext
from adaptor_nb.drivers import reference


class Seeing:
    """A driver that declares images and answers with what it was handed (type, size, digest of each image)."""

    name = "seeing"

    def __init__(self) -> None:
        self.invocations: list[Invocation] = []

    def descriptor(self) -> Descriptor:
        return Descriptor(name=self.name, provider="test", images=True)

    def validate_config(self) -> None:
        pass

    def config_fingerprint(self) -> str:
        return "seeing"

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        self.invocations.append(invocation)
        seen = [f"{i.media_type}:{i.size}:{hashlib.sha256(i.data).hexdigest()[:8]}" for i in invocation.images]
        text = " ".join(seen) or "no images"
        return DriverOutcome(text=json.dumps(text) if "JSON" in invocation.prompt else text)


def _seen(data: bytes, media_type: str) -> str:
    return f"{media_type}:{len(data)}:{hashlib.sha256(data).hexdigest()[:8]}"


async def test_bytes_and_paths_are_typed_by_their_magic_bytes_not_the_file_name(tmp_path: Path) -> None:
    picture = png()
    disguised = tmp_path / "photo.png"  # a JPEG with a PNG name
    disguised.write_bytes(JPEG)
    driver = Seeing()
    async with Agent(driver) as agent:
        result = await agent.send("look", images=[picture, str(disguised), bytearray(picture)]).result()
    assert result.text == " ".join(
        [_seen(picture, "image/png"), _seen(JPEG, "image/jpeg"), _seen(picture, "image/png")]
    )
    assert driver.invocations[0].prompt == "look"
    assert driver.invocations[0].images[1].source == str(disguised)


async def test_threads_run_as_and_run_sync_accept_images() -> None:
    picture = png()
    driver = Seeing()
    async with Agent(driver) as agent:
        thread_text = (await agent.thread("t").send("look", images=[picture]).result()).text
        value, _ = await run_as(agent, "look", str, images=[picture])
    assert thread_text == _seen(picture, "image/png")
    assert value == _seen(picture, "image/png")
    assert [len(i.images) for i in driver.invocations] == [1, 1]


def test_run_sync_carries_images() -> None:
    driver = Seeing()
    agent = Agent(driver)
    try:
        assert agent.run_sync("look", images=[JPEG]).text == _seen(JPEG, "image/jpeg")
        assert run_sync(lambda: agent.send("again", images=[JPEG]).result()).text == _seen(JPEG, "image/jpeg")
    finally:
        run_sync(agent.close)


async def test_a_send_without_images_hands_the_driver_none() -> None:
    driver = Seeing()
    async with Agent(driver) as agent:
        assert (await agent.send("plain").result()).text == "no images"
    assert driver.invocations[0].images == ()


@pytest.mark.parametrize(
    ("images", "words"),
    [
        ([b"GIF89a...."], ["images[0]", "not a PNG or JPEG", "47 49 46"]),
        ([png(), b""], ["images[1]", "0 bytes", "not a PNG or JPEG"]),
        (["/no/such/picture.png"], ["images[0]", "'/no/such/picture.png'", "no such file"]),
        ([png(), 42], ["images[1]", "int", "bytes or a path"]),
        (png(), ["images must be a list", "images=[image]"]),
        ("chart.png", ["images must be a list", "str"]),
    ],
)
async def test_a_bad_item_fails_naming_the_option_and_the_item_before_the_driver_runs(
    images: object, words: list[str]
) -> None:
    driver = Seeing()
    async with Agent(driver) as agent:
        with pytest.raises(ConfigError) as info:
            await agent.send("look", images=images).result()  # type: ignore[arg-type]
    assert info.value.option == "images"
    for word in words:
        assert word in str(info.value)
    assert driver.invocations == []


async def test_a_driver_without_the_images_capability_is_refused_before_launch() -> None:
    async with Agent(reference.Driver()) as agent:
        with pytest.raises(ConfigError) as info:
            await agent.send("look", images=[png()]).result()
    assert info.value.option == "images"
    assert info.value.details == {"capability": "images"}
    assert "'reference'" in str(info.value) and "images capability" in str(info.value)


async def test_images_is_a_call_option_not_an_agent_default() -> None:
    with pytest.raises(TypeError, match="call-only option 'images'"):
        Agent(Seeing(), images=[png()])  # type: ignore[call-arg]


async def test_a_standby_send_with_images_starts_a_run_that_carries_them() -> None:
    driver = Seeing()
    async with Agent(driver) as agent:
        standby = await agent.thread("s").standby()
        await standby.send("look", images=[JPEG])
        async for event in standby.events():
            if isinstance(event, Done):
                break
        await standby.close()
    assert event.result is not None and event.result.text == _seen(JPEG, "image/jpeg")
    assert [len(i.images) for i in driver.invocations] == [1]
