"""Structured output on the real Codex CLI: the schema goes out as ``turn/start.outputSchema``, and the answer is
always validated locally because Codex does not check it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from adaptor_nb import Agent, PolicyViolation
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._openai import Reply

from .conftest import DriverFactory
from .helpers import run_all

pytestmark = pytest.mark.codex


class Person(BaseModel):
    name: str
    age: int


async def test_the_schema_is_sent_natively_and_the_answer_decodes(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(Reply.json({"name": "Ada", "age": 36}))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        result = await agent.send("who?", schema=Person).result()
    assert result.decode(Person) == Person(name="Ada", age=36)
    assert result.structured == {"name": "Ada", "age": 36}
    request = fake.model_requests[0]
    fmt = request.body["text"]["format"]
    assert (fmt["type"], fmt["strict"], fmt["name"]) == ("json_schema", True, "codex_output_schema")
    assert request.output_schema is not None
    assert set(request.output_schema["properties"]) == {"name", "age"}
    assert request.prompt == "who?"  # native: no JSON instructions appended to the prompt


async def test_an_answer_that_breaks_the_schema_is_a_policy_violation(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(Reply.json({"name": "Ada"}))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        _, _, error = await run_all(agent.send("who?", schema=Person))
    assert isinstance(error, PolicyViolation)
    assert error.result is not None and error.result.text == '{"name": "Ada"}'
    assert "age" in str(error)


async def test_an_answer_that_is_not_json_is_a_policy_violation(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(Reply.text("Ada, 36 years old"))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        _, _, error = await run_all(agent.send("who?", schema=Person))
    assert isinstance(error, PolicyViolation)
    assert "not JSON" in str(error)


async def test_the_schema_applies_to_one_run_only(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        thread = agent.thread("t")
        value = await thread.send("who?", schema=Person).result()
        plain = await thread.send("and now in words [[say Ada is 36]]").result()
    assert value.decode(Person) == Person(name="x", age=1)  # the fake answers a schema request with an example
    assert plain.text == "Ada is 36"
    assert fake.model_requests[1].output_schema is None
