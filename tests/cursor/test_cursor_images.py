"""Cursor's print mode takes the prompt as text only: ``images=`` is refused before the CLI starts, naming the
capability."""

from __future__ import annotations

from collections.abc import Callable

from _pictures import png
from _support import drain, of

from adaptor_nb import Agent, ConfigError, ProcessInfo
from adaptor_nb.drivers import cursor


async def test_images_are_refused_before_launch_naming_the_capability(
    make_driver: Callable[..., cursor.Driver],
) -> None:
    driver = make_driver("happy-assistant.jsonl")
    assert driver.descriptor().images is False
    async with Agent(driver) as agent:
        events, result, err = await drain(agent.send("look", images=[png()]))
    assert result is None and isinstance(err, ConfigError)
    assert err.option == "images" and err.details == {"capability": "images"}
    assert "'cursor'" in str(err)
    assert of(events, ProcessInfo) == []


async def test_the_same_prompt_without_images_runs(make_driver: Callable[..., cursor.Driver]) -> None:
    async with Agent(make_driver("happy-assistant.jsonl")) as agent:
        result = await agent.send("look").result()
    assert result.text
