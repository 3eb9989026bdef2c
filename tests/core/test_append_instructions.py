"""``append_instructions`` adds to the instructions instead of replacing them: the Agent's and each call's text are
all kept, after ``instructions``, and a Thread made with other appended text is not resumed as if it were the same."""

from __future__ import annotations

import pytest

from adaptor_nb import Agent, ConfigError
from adaptor_nb.driver import Descriptor, DriverOutcome, Invocation, RunContext


class Listening:
    """A driver that answers with the instructions it was handed."""

    name = "listening"

    def __init__(self) -> None:
        self.seen: list[Invocation] = []

    def descriptor(self) -> Descriptor:
        return Descriptor(name=self.name, provider="test")

    def validate_config(self) -> None:
        pass

    def config_fingerprint(self) -> str:
        return "listening"

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        self.seen.append(invocation)
        return DriverOutcome(text=invocation.instructions)


async def test_appended_text_follows_the_instructions_and_adds_up_across_scopes() -> None:
    async with Agent(Listening(), instructions="Be brief.", append_instructions="Cite files.") as agent:
        assert (await agent.send("x").result()).text == "Be brief.\n\nCite files."
        both = await agent.send("x", append_instructions="Use British spelling.").result()
        replaced = await agent.send("x", instructions="Be thorough.").result()
        cleared = await agent.send("x", instructions="").result()
        nothing_added = await agent.send("x", append_instructions="").result()
    assert both.text == "Be brief.\n\nCite files.\n\nUse British spelling."
    assert replaced.text == "Be thorough.\n\nCite files."  # instructions replace; appended text stays
    assert cleared.text == "Cite files."  # clearing the instructions leaves the appended text
    assert nothing_added.text == "Be brief.\n\nCite files."  # an empty string adds nothing


async def test_a_call_never_changes_the_agents_appended_text() -> None:
    async with Agent(Listening(), append_instructions="A.") as agent:
        await agent.send("x", append_instructions="B.").result()
        assert (await agent.send("x").result()).text == "A."


async def test_a_non_string_is_a_config_error_naming_the_option() -> None:
    with pytest.raises(ConfigError) as info:
        Agent(Listening(), append_instructions=["no"])  # type: ignore[arg-type]
    assert info.value.option == "append_instructions"
