"""Structured output through the CLI's native --json-schema (its StructuredOutput tool), validated locally."""

from __future__ import annotations

from pathlib import Path

import pytest
from _support import drain
from pydantic import BaseModel

from adaptor_nb import Agent, PolicyViolation, run_as
from adaptor_nb.testing import ChatReply, FakeChatCompletionsServer

from .conftest import DriverFactory

pytestmark = pytest.mark.codebuddy


class Person(BaseModel):
    name: str
    n: int


def schema_of(fake: FakeChatCompletionsServer) -> dict[str, object]:
    tools = fake.model_requests[0].body["tools"]
    (tool,) = [t["function"] for t in tools if t["function"]["name"] == "StructuredOutput"]
    return dict(tool["parameters"])


async def test_the_native_schema_tool_gives_a_validated_value(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.enqueue(ChatReply.tool("StructuredOutput", {"name": "bob", "n": 3}))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        value, result = await run_as(agent, "who?", Person)
    assert value == Person(name="bob", n=3)
    assert result.decode(Person) == value
    assert set(schema_of(fake)["required"]) == {"name", "n"}  # type: ignore[call-overload]
    assert len(fake.model_requests) == 1  # a valid call ends the turn at once


async def test_an_invalid_call_is_retried_by_the_cli_and_the_value_validated(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.enqueue(
        ChatReply.tool("StructuredOutput", {"name": "bob", "n": "three"}),
        ChatReply.tool("StructuredOutput", {"name": "bob", "n": 3}),
    )
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        value, _ = await run_as(agent, "who?", Person)
    assert value.n == 3
    assert "must be integer" in fake.model_requests[1].tool_outputs[-1]


async def test_text_instead_of_the_tool_is_a_policy_violation_with_the_text_kept(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.responder = lambda request: ChatReply.text("plain words")
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        _, _, error = await drain(agent.send("just talk", schema=Person))
    assert isinstance(error, PolicyViolation)
    assert error.result is not None and error.result.text == "plain words"
    assert "StructuredOutput" in error.message
    assert len(fake.model_requests) == 4  # the CLI asks three more times before giving up


# CLI 2.163.0 offers its StructuredOutput tool as {data: object} when the tool's parameters find no schema: at times
# by a race inside the CLI, and always when its JSON Schema checker (draft-07 by default) does not know the schema's
# "$schema", which is how these tests reach that form every time.
DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema"
PERSON = {**Person.model_json_schema(), "$schema": DRAFT_2020}


def offered_properties(fake: FakeChatCompletionsServer) -> list[str]:
    return sorted(schema_of(fake)["properties"])  # type: ignore[call-overload]


async def test_the_fallback_form_gives_the_object_under_data_validated(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.enqueue(ChatReply.tool("StructuredOutput", {"data": {"name": "bob", "n": 3}}))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        result = await agent.send("who?", schema=PERSON).result()
    assert offered_properties(fake) == ["data"]  # the CLI offered the fallback form
    assert result.structured == {"name": "bob", "n": 3}
    assert len(fake.model_requests) == 1


async def test_a_call_in_the_real_form_that_the_cli_rejects_still_gives_the_value(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.responder = lambda request: ChatReply.tool("StructuredOutput", {"name": "bob", "n": 3})
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        result = await agent.send("who?", schema=PERSON).result()
    assert offered_properties(fake) == ["data"]
    assert "missing required parameter(s): data" in fake.model_requests[1].tool_outputs[-1]
    assert result.structured == {"name": "bob", "n": 3}
    assert result.metadata["structured_output.rescued"] == "true"
    assert len(fake.model_requests) == 4  # the CLI rejected the call four times and gave up


async def test_an_invalid_object_under_data_is_a_policy_violation(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.enqueue(ChatReply.tool("StructuredOutput", {"data": {"name": "bob", "n": "three"}}))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        _, _, error = await drain(agent.send("who?", schema=PERSON))
    assert offered_properties(fake) == ["data"]
    assert isinstance(error, PolicyViolation)
    assert "does not match schema" in error.message
