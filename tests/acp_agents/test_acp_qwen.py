"""The ACP driver on the real Qwen Code (``qwen --acp``) against the fake Chat Completions server."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from pydantic import BaseModel

from adaptor_nb import (
    Agent,
    ApprovalDenied,
    ApprovalMode,
    ApprovalPolicy,
    ApprovalRequest,
    MessageState,
    Policy,
    RunCancelled,
    RunError,
    Timing,
)
from adaptor_nb.testing import ChatReply, FakeChatCompletionsServer
from adaptor_nb.threadstore import MemoryStore

from .conftest import DriverFactory

MAKE_FILE = '[[tool run_shell_command {"command": "echo hi > made.txt"}]]'
ASK = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.ASK))


class Answer:
    """An approval handler that answers every request the same way and keeps what it saw."""

    def __init__(self, approve: bool) -> None:
        self.approve = approve
        self.seen: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> None:
        self.seen.append(request)
        if self.approve:
            request.approve()
        else:
            request.deny("not today")


async def test_a_plain_turn_answers_with_the_model_text(
    make_qwen: DriverFactory, fake: FakeChatCompletionsServer, tmp_path: Path
) -> None:
    fake.enqueue(ChatReply.text("hello from the fake"))
    async with Agent(make_qwen(), workspace=str(tmp_path)) as agent:
        result = await agent.send("Say hello.").result()
    assert result.text == "hello from the fake"
    assert result.provider == "qwen"
    assert result.usage is not None


async def test_an_approved_tool_call_runs_and_a_second_turn_continues_the_thread(
    make_qwen: DriverFactory, fake: FakeChatCompletionsServer, tmp_path: Path
) -> None:
    handler = Answer(True)
    async with Agent(make_qwen(), workspace=str(tmp_path), policy=ASK, on_approval=handler) as agent:
        thread = agent.thread("t1")
        first = await thread.send(f"Make a file. {MAKE_FILE}").result()
        second = await thread.send("And again? [[say second answer]]").result()
    assert first.text.startswith("Done.")
    assert (tmp_path / "made.txt").read_text().strip() == "hi"
    assert second.text == "second answer"
    # The second prompt went to the same session: the model saw the first turn with it.
    second_req = [r for r in fake.requests if "[[say second answer]]" in " ".join(r.texts("user"))]
    assert second_req and any("Make a file." in t for t in second_req[0].texts("user"))
    assert len(handler.seen) == 1
    assert {c.label for c in handler.seen[0].choices} >= {"Allow", "Reject"}


async def test_a_denied_tool_call_does_not_run_and_ends_the_run(
    make_qwen: DriverFactory, fake: FakeChatCompletionsServer, tmp_path: Path
) -> None:
    handler = Answer(False)
    async with Agent(make_qwen(), workspace=str(tmp_path), policy=ASK, on_approval=handler) as agent:
        with pytest.raises(ApprovalDenied):
            await agent.send(f"Make a file. {MAKE_FILE}").result()
    assert not (tmp_path / "made.txt").exists()
    assert len(handler.seen) == 1 and handler.seen[0].title == "echo hi > made.txt"


async def test_cancel_mid_turn_sends_session_cancel_and_the_thread_goes_on(
    make_qwen: DriverFactory, fake: FakeChatCompletionsServer, tmp_path: Path
) -> None:
    hold = fake.hold("c")
    try:
        async with Agent(make_qwen(), workspace=str(tmp_path)) as agent:
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


async def test_an_interrupt_cancels_the_prompt_and_prompts_again_with_the_message(
    make_qwen: DriverFactory, fake: FakeChatCompletionsServer, tmp_path: Path
) -> None:
    hold = fake.hold("i")
    # Qwen Code sends a cancelled prompt again with the next one: the reply follows the message, not the prompt.
    fake.responder = lambda req: (
        ChatReply.text("plan B") if "Change of plan" in req.prompt else ChatReply.text("too late", hold=hold)
    )
    try:
        async with Agent(make_qwen(), workspace=str(tmp_path)) as agent:
            stream = agent.thread("t").send("Wait.")
            await asyncio.to_thread(fake.wait_for_requests, 1, 60)
            await stream.send("Change of plan.", id="m1", when=Timing.INTERRUPT)
            result = await stream.result()
    finally:
        hold.set()
    assert result.text == "plan B"
    (message,) = [m for m in result.messages() if m.id == "m1"]
    assert message.state is MessageState.DELIVERED
    assert (message.boundary, message.mechanism) == ("interrupt", "session/cancel")
    assert result.turns == 2


async def test_a_named_thread_continues_after_the_agent_is_closed_and_reopened(
    make_qwen: DriverFactory, fake: FakeChatCompletionsServer, tmp_path: Path
) -> None:
    store = MemoryStore()
    async with Agent(make_qwen(), workspace=str(tmp_path), thread_store=store) as agent:
        first = await agent.thread("kept").send("Remember the word kiwi. [[say noted]]").result()
    async with Agent(make_qwen(), workspace=str(tmp_path), thread_store=store) as agent:
        second = await agent.thread("kept").send("Which word? [[say kiwi]]").result()
    assert (first.text, second.text) == ("noted", "kiwi")
    # A new agent process loaded the session (session/load): the model saw the first turn again.
    asked = [r for r in fake.requests if "Which word?" in " ".join(r.texts("user"))]
    assert asked and any("Remember the word kiwi." in t for t in asked[0].texts("user"))


class Person(BaseModel):
    name: str
    age: int


async def test_structured_output_is_prompted_and_validated_into_a_pydantic_model(
    make_qwen: DriverFactory, tmp_path: Path
) -> None:
    async with Agent(make_qwen(), workspace=str(tmp_path)) as agent:
        result = await agent.send('Who? [[json {"name": "Ada", "age": 36}]]', schema=Person).result()
    assert result.decode(Person) == Person(name="Ada", age=36)


async def test_a_model_is_chosen_through_the_session_model_option(make_qwen: DriverFactory, tmp_path: Path) -> None:
    async with Agent(make_qwen(), workspace=str(tmp_path)) as agent:
        chosen = await agent.send("Hi. [[say hi]]", model="fake-model").result()
        with pytest.raises(RunError, match=r"cannot switch to model 'no-such-model' \(it offers: fake-model\)"):
            await agent.send("Hi. [[say hi]]", model="no-such-model").result()
    assert (chosen.text, chosen.model) == ("hi", "fake-model")


async def test_the_inspector_lists_the_models_and_modes_a_new_session_offers(make_qwen: DriverFactory) -> None:
    async with Agent(make_qwen()) as agent:
        models = await agent.inspect().models()
        schema = await agent.inspect().config_schema()
    assert [(m.name, m.default) for m in models] == [("fake-model", True)]
    mode = schema.schema["properties"]["mode"]
    assert set(mode["enum"]) == {"plan", "default", "auto-edit", "auto", "yolo"}
    option = schema.schema["properties"]["config.model"]
    assert option["default"] == models[0].id and [c["name"] for c in option["x-choices"]] == ["fake-model"]


async def test_without_its_key_qwen_code_fails_naming_the_variable_to_set(
    make_qwen: DriverFactory, tmp_path: Path
) -> None:
    driver = make_qwen(secret_env={}, env={"OPENAI_API_KEY": ""})
    async with Agent(driver, workspace=str(tmp_path)) as agent:
        with pytest.raises(RunError, match=r"needs authentication first .*\(set OPENAI_API_KEY or DASHSCOPE_API_KEY\)"):
            await agent.send("Hello.").result()


async def test_qwen_code_own_notifications_are_ignored_without_an_error_log(
    make_qwen: DriverFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with Agent(make_qwen(), workspace=str(tmp_path)) as agent:
        result = await agent.send("Say hello. [[say hello]]").result()
    assert result.text == "hello"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
