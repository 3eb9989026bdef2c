"""The ACP driver on the real codex-acp (Zed's adapter around Codex) against the fake Responses server, with an
isolated CODEX_HOME."""

from __future__ import annotations

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
from adaptor_nb.drivers import acp
from adaptor_nb.drivers.codex._home import provider_settings, write_codex_home
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._openai import Reply
from adaptor_nb.threadstore import MemoryStore

from .conftest import API_KEY, NetworkTripwire, find_agent

KEY_ENV = "FAKE_OPENAI_API_KEY"
ASK = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.ASK))


@pytest.fixture(scope="session")
def codex_acp_bin() -> str:
    found = find_agent("codex-acp")
    if found is None:
        pytest.fail("codex-acp is missing: run scripts/setup.sh (it installs @zed-industries/codex-acp)")
    return found


@pytest.fixture
async def fake_responses() -> object:
    async with FakeOpenAIServer() as server:
        yield server


def codex_driver(
    bin_: str, tmp_path: Path, server: FakeOpenAIServer, wire: NetworkTripwire, **settings: object
) -> acp.Driver:
    config = provider_settings(
        base_url=server.base_url, model="gpt-5.5", env_key=KEY_ENV, request_max_retries=0, stream_max_retries=0
    )
    config.update(settings)
    home = write_codex_home(tmp_path / "codex-home", config)
    (tmp_path / "home").mkdir(exist_ok=True)
    env = {"HOME": str(tmp_path / "home"), "CODEX_HOME": str(home), **wire.env()}
    return acp.Driver(acp.preset("codex", command=[bin_], env=env, secret_env={KEY_ENV: API_KEY}, grace_period=1.0))


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


async def test_codex_acp_answers_a_plain_turn_and_a_second_one_on_the_thread(
    codex_acp_bin: str, fake_responses: FakeOpenAIServer, tmp_path: Path, tripwire: NetworkTripwire
) -> None:
    fake_responses.enqueue(Reply.text("first from codex"), Reply.text("second from codex"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with Agent(codex_driver(codex_acp_bin, tmp_path, fake_responses, tripwire), workspace=str(workspace)) as a:
        thread = a.thread("t")
        first = await thread.send("Say something.").result()
        second = await thread.send("Again.").result()
    assert first.text == "first from codex"
    assert second.text == "second from codex"
    assert first.provider == "codex"


@pytest.mark.parametrize("approve", [True, False])
async def test_codex_acp_asks_before_a_command_outside_its_sandbox(
    approve: bool, codex_acp_bin: str, fake_responses: FakeOpenAIServer, tmp_path: Path, tripwire: NetworkTripwire
) -> None:
    fake_responses.enqueue(
        Reply.exec_command("touch made.txt", sandbox_permissions="require_escalated", justification="make a file"),
        Reply.text("finished"),
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    handler = Answer(approve)
    driver = codex_driver(
        codex_acp_bin, tmp_path, fake_responses, tripwire, approval_policy="on-request", sandbox_mode="read-only"
    )
    async with Agent(driver, workspace=str(workspace), policy=ASK, on_approval=handler) as agent:
        if approve:
            result = await agent.send("Make a file.").result()
            assert result.text == "finished"
        else:
            with pytest.raises(ApprovalDenied):
                await agent.send("Make a file.").result()
    assert len(handler.seen) == 1
    assert (workspace / "made.txt").exists() is approve


async def test_codex_acp_cancel_mid_turn_and_the_thread_goes_on(
    codex_acp_bin: str, fake_responses: FakeOpenAIServer, tmp_path: Path, tripwire: NetworkTripwire
) -> None:
    hold = fake_responses.hold("c")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    try:
        async with Agent(
            codex_driver(codex_acp_bin, tmp_path, fake_responses, tripwire), workspace=str(workspace)
        ) as a:
            thread = a.thread("t")
            stream = thread.send("Wait. [[hold c]] [[say too late]]")
            await fake_responses.model_request(1, timeout=60)
            stream.cancel()
            with pytest.raises(RunCancelled):
                await stream.result()
            hold.set()
            after = await thread.send("Again. [[say after the cancel]]").result()
    finally:
        hold.set()
    assert after.text == "after the cancel"


async def test_codex_acp_continues_a_named_thread_in_a_new_agent_through_session_load(
    codex_acp_bin: str, fake_responses: FakeOpenAIServer, tmp_path: Path, tripwire: NetworkTripwire
) -> None:
    store = MemoryStore()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    driver = codex_driver(codex_acp_bin, tmp_path, fake_responses, tripwire)
    async with Agent(driver, workspace=str(workspace), thread_store=store) as agent:
        first = await agent.thread("kept").send("Remember the word kiwi. [[say noted]]").result()
    async with Agent(driver, workspace=str(workspace), thread_store=store) as agent:
        second = await agent.thread("kept").send("Which word? [[say kiwi]]").result()
    assert (first.text, second.text) == ("noted", "kiwi")
    asked = [r for r in fake_responses.requests if "Which word?" in " ".join(r.user_texts())]
    assert asked and any("Remember the word kiwi." in t for t in asked[-1].user_texts())


class Person(BaseModel):
    name: str
    age: int


async def test_codex_acp_structured_output_is_prompted_and_validated_into_a_pydantic_model(
    codex_acp_bin: str, fake_responses: FakeOpenAIServer, tmp_path: Path, tripwire: NetworkTripwire
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with Agent(codex_driver(codex_acp_bin, tmp_path, fake_responses, tripwire), workspace=str(workspace)) as a:
        result = await a.send('Who? [[json {"name": "Ada", "age": 36}]]', schema=Person).result()
    assert result.decode(Person) == Person(name="Ada", age=36)


async def test_codex_acp_an_interrupt_prompts_again_with_the_message(
    codex_acp_bin: str, fake_responses: FakeOpenAIServer, tmp_path: Path, tripwire: NetworkTripwire
) -> None:
    hold = fake_responses.hold("i")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    try:
        async with Agent(
            codex_driver(codex_acp_bin, tmp_path, fake_responses, tripwire), workspace=str(workspace)
        ) as a:
            stream = a.thread("t").send("Wait. [[hold i]] [[say too late]]")
            await fake_responses.model_request(1, timeout=60)
            await stream.send("Change of plan. [[say plan B]]", id="m1", when=Timing.INTERRUPT)
            result = await stream.result()
    finally:
        hold.set()
    assert result.text == "plan B"
    (message,) = [m for m in result.messages() if m.id == "m1"]
    assert (message.state, message.boundary, message.mechanism) == (
        MessageState.DELIVERED,
        "interrupt",
        "session/cancel",
    )


async def test_codex_acp_the_inspector_lists_the_models_and_modes_a_new_session_offers(
    codex_acp_bin: str, fake_responses: FakeOpenAIServer, tmp_path: Path, tripwire: NetworkTripwire
) -> None:
    async with Agent(codex_driver(codex_acp_bin, tmp_path, fake_responses, tripwire)) as agent:
        models = await agent.inspect().models()
        schema = await agent.inspect().config_schema()
    assert ("gpt-5.5", True) in [(m.id, m.default) for m in models]
    assert schema.schema["properties"]["mode"]["enum"] == ["read-only", "auto", "full-access"]
    assert "low" in schema.schema["properties"]["config.reasoning_effort"]["enum"]
    assert not fake_responses.requests  # no model request: nothing was prompted


@pytest.mark.parametrize("fault", ["no key", "no endpoint"])
async def test_codex_acp_without_its_key_or_endpoint_fails_naming_what_to_fix(
    fault: str, codex_acp_bin: str, fake_responses: FakeOpenAIServer, tmp_path: Path, tripwire: NetworkTripwire
) -> None:
    driver = codex_driver(codex_acp_bin, tmp_path, fake_responses, tripwire)
    config = driver.config
    if fault == "no key":
        driver = acp.Driver(config, secret_env={}, env={**config.env, KEY_ENV: ""})
    else:
        home = Path(config.env["CODEX_HOME"])
        toml = (home / "config.toml").read_text().replace(fake_responses.base_url, "http://127.0.0.1:9/v1")
        (home / "config.toml").write_text(toml)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with Agent(driver, workspace=str(workspace)) as agent:
        with pytest.raises(RunError) as info:
            await agent.send("Hello.").result()
    wanted = f"Missing environment variable: `{KEY_ENV}`" if fault == "no key" else "http://127.0.0.1:9/v1"
    assert wanted in str(info.value)
