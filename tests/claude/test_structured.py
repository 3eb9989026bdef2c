"""Structured output through --json-schema on the real CLI, always validated locally."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from adaptor_nb import PolicyViolation, run_as
from adaptor_nb.testing._anthropic import FakeAnthropicServer

from .helpers import drain

pytestmark = pytest.mark.claude


class Person(BaseModel):
    name: str
    n: int


async def test_native_schema_gives_a_validated_value(agent_factory, fake: FakeAnthropicServer) -> None:
    agent = agent_factory()
    value, result = await run_as(agent, 'who? [[structured {"name": "bob", "n": 3}]]', Person)
    assert value == Person(name="bob", n=3)
    assert result.decode(Person) == value
    tool = fake.message_requests[0].tool("StructuredOutput")
    assert tool is not None and set(tool["input_schema"]["required"]) == {"name", "n"}


async def test_no_structured_output_is_a_policy_violation_with_the_text_kept(agent_factory, fake) -> None:
    # The model answers in prose twice (the CLI nudges once), so the result has no structured_output.
    _events, _result, err = await drain(agent_factory().send("just talk [[say plain words]]", schema=Person))
    assert isinstance(err, PolicyViolation)
    assert err.result is not None and err.result.text
    assert "StructuredOutput" in err.message
    assert any("[structured-output-enforce]" in r.prompt for r in fake.message_requests)


async def test_an_invalid_first_attempt_is_retried_by_the_cli(agent_factory, fake) -> None:
    fake.enqueue(
        fake.Reply.structured({"name": "bob", "n": "three"}),
        fake.Reply.structured({"name": "bob", "n": 3}),
    )
    value, _result = await run_as(agent_factory(), "who?", Person)
    assert value.n == 3
    errors = [r.tool_results[-1] for r in fake.message_requests[1:2]]
    assert errors and errors[0].get("is_error") and "must be integer" in json.dumps(errors[0])


async def test_a_non_object_schema_is_wrapped_and_unwrapped(agent_factory) -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    result = await agent_factory().send('numbers [[structured {"items": [1, 2, 3]}]]', schema=schema).result()
    assert result.structured == [1, 2, 3]


async def test_a_list_of_models_round_trips(agent_factory) -> None:
    items = {"items": [{"name": "a", "n": 1}, {"name": "b", "n": 2}]}
    value, _ = await run_as(agent_factory(), f"list [[structured {json.dumps(items)}]]", list[Person])
    assert [p.name for p in value] == ["a", "b"]
