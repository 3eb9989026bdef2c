"""The ACP driver on the real CodeBuddy binary (``codebuddy-headless --acp``) against the fake Chat Completions
server, with a private HOME."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel

from adaptor_nb import (
    Agent,
    ApprovalDenied,
    ApprovalMode,
    ApprovalPolicy,
    ApprovalRequest,
    MessageFailure,
    MessageState,
    Policy,
    RunCancelled,
    Timing,
)
from adaptor_nb.drivers import acp
from adaptor_nb.testing import ChatReply, FakeChatCompletionsServer
from adaptor_nb.threadstore import MemoryStore

from .conftest import API_KEY, NetworkTripwire

ASK = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.ASK))


def codebuddy_driver(
    bin_: str, home: Path, server: FakeChatCompletionsServer, wire: NetworkTripwire, **fields: bool
) -> acp.Driver:
    env = {"HOME": str(home), "CODEBUDDY_BASE_URL": server.url, "CODEBUDDY_MAX_RETRIES": "0", **wire.env()}
    return acp.Driver(
        acp.preset(
            "codebuddy",
            command=[bin_, "--acp"],
            env=env,
            secret_env={"CODEBUDDY_API_KEY": API_KEY},
            grace_period=1.0,
            **fields,
        )
    )


class Answer:
    def __init__(self, approve: bool) -> None:
        self.approve = approve
        self.seen: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> None:
        self.seen.append(request)
        if self.approve:
            request.approve()
        else:
            request.deny("not today")


async def test_codebuddy_acp_answers_two_turns_on_a_thread(
    codebuddy_bin: str, fake: FakeChatCompletionsServer, home: Path, tmp_path: Path, tripwire: NetworkTripwire
) -> None:
    async with Agent(codebuddy_driver(codebuddy_bin, home, fake, tripwire), workspace=str(tmp_path)) as agent:
        thread = agent.thread("t")
        first = await thread.send("One. [[say first from codebuddy]]").result()
        second = await thread.send("Two. [[say second from codebuddy]]").result()
    assert first.text == "first from codebuddy"
    assert second.text == "second from codebuddy"
    assert first.provider == "codebuddy"


@pytest.mark.parametrize("approve", [True, False])
async def test_codebuddy_acp_asks_before_a_command(
    approve: bool,
    codebuddy_bin: str,
    fake: FakeChatCompletionsServer,
    home: Path,
    tmp_path: Path,
    tripwire: NetworkTripwire,
) -> None:
    fake.enqueue(
        ChatReply.tool("Bash", {"command": "touch made.txt", "description": "create a file"}),
        ChatReply.text("finished"),
    )
    handler = Answer(approve)
    driver = codebuddy_driver(codebuddy_bin, home, fake, tripwire)
    async with Agent(driver, workspace=str(tmp_path), policy=ASK, on_approval=handler) as agent:
        if approve:
            result = await agent.send("Make a file.").result()
            assert result.text == "finished"
        else:
            with pytest.raises(ApprovalDenied):
                await agent.send("Make a file.").result()
    assert len(handler.seen) == 1
    assert (tmp_path / "made.txt").exists() is approve


async def test_codebuddy_acp_cancel_mid_turn_and_the_thread_goes_on(
    codebuddy_bin: str, fake: FakeChatCompletionsServer, home: Path, tmp_path: Path, tripwire: NetworkTripwire
) -> None:
    hold = fake.hold("c")
    try:
        async with Agent(codebuddy_driver(codebuddy_bin, home, fake, tripwire), workspace=str(tmp_path)) as agent:
            thread = agent.thread("t")
            stream = thread.send("Wait. [[hold c]] [[say too late]]")
            await asyncio.to_thread(fake.wait_for_requests, 1, 60)
            stream.cancel()
            with pytest.raises(RunCancelled):
                await stream.result()
            hold.set()
            after = await thread.send("Again. [[say after the cancel]]").result()
    finally:
        hold.set()
    assert after.text == "after the cancel"


async def test_codebuddy_acp_continues_a_named_thread_in_a_new_agent_through_session_load(
    codebuddy_bin: str, fake: FakeChatCompletionsServer, home: Path, tmp_path: Path, tripwire: NetworkTripwire
) -> None:
    store = MemoryStore()
    driver = codebuddy_driver(codebuddy_bin, home, fake, tripwire)
    async with Agent(driver, workspace=str(tmp_path), thread_store=store) as agent:
        first = await agent.thread("kept").send("Remember the word kiwi. [[say noted]]").result()
    async with Agent(driver, workspace=str(tmp_path), thread_store=store) as agent:
        second = await agent.thread("kept").send("Which word? [[say kiwi]]").result()
    assert (first.text, second.text) == ("noted", "kiwi")
    asked = [r for r in fake.requests if "Which word?" in " ".join(r.texts("user"))]
    assert asked and any("Remember the word kiwi." in t for t in asked[-1].texts("user"))


class Person(BaseModel):
    name: str
    age: int


async def test_codebuddy_acp_structured_output_is_prompted_and_validated_into_a_pydantic_model(
    codebuddy_bin: str, fake: FakeChatCompletionsServer, home: Path, tmp_path: Path, tripwire: NetworkTripwire
) -> None:
    async with Agent(codebuddy_driver(codebuddy_bin, home, fake, tripwire), workspace=str(tmp_path)) as agent:
        result = await agent.send('Who? [[json {"name": "Ada", "age": 36}]]', schema=Person).result()
    assert result.decode(Person) == Person(name="Ada", age=36)


async def test_codebuddy_acp_an_interrupt_fails_the_message_while_the_cancelled_request_runs(
    codebuddy_bin: str, fake: FakeChatCompletionsServer, home: Path, tmp_path: Path, tripwire: NetworkTripwire
) -> None:
    """CodeBuddy answers every prompt ``cancelled`` until the model request of the cancelled one has ended (so its
    preset declares no interrupt; here it is forced on): the message's prompt never reached the model, so the
    message fails instead of being reported delivered."""
    hold = fake.hold("i")
    fake.responder = lambda req: (
        ChatReply.text("plan B")
        if "Change of plan" in req.prompt
        else ChatReply.text("too late", hold=hold if req.prompt == "Wait." else None)
    )
    try:
        driver = codebuddy_driver(codebuddy_bin, home, fake, tripwire, interrupt=True)
        async with Agent(driver, workspace=str(tmp_path)) as agent:
            stream = agent.thread("t").send("Wait.")
            await asyncio.to_thread(fake.wait_for_requests, 1, 60)
            await stream.send("Change of plan.", id="m1", when=Timing.INTERRUPT)
            result = await stream.result()
    finally:
        hold.set()
    (message,) = [m for m in result.messages() if m.id == "m1"]
    assert (message.state, message.reason) == (MessageState.FAILED, MessageFailure.PROVIDER_REJECTED)
    assert not [r for r in fake.requests if "Change of plan" in r.prompt]


async def test_codebuddy_acp_the_inspector_lists_the_models_and_modes_a_new_session_offers(
    codebuddy_bin: str, fake: FakeChatCompletionsServer, home: Path, tripwire: NetworkTripwire
) -> None:
    async with Agent(codebuddy_driver(codebuddy_bin, home, fake, tripwire)) as agent:
        models = await agent.inspect().models()
        schema = await agent.inspect().config_schema()
    assert models and sum(m.default for m in models) == 1
    assert {"default", "acceptEdits", "plan"} <= set(schema.schema["properties"]["mode"]["enum"])
    assert schema.schema["properties"]["config.multitask"]["type"] == "boolean"
