"""The ACP driver on the real CodeBuddy binary (``codebuddy-headless --acp``) against the fake Chat Completions
server, with a private HOME."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaptor_nb import Agent, ApprovalDenied, ApprovalMode, ApprovalPolicy, ApprovalRequest, Policy
from adaptor_nb.drivers import acp
from adaptor_nb.testing import ChatReply, FakeChatCompletionsServer

from .conftest import API_KEY, NetworkTripwire

ASK = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.ASK))


def codebuddy_driver(bin_: str, home: Path, server: FakeChatCompletionsServer, wire: NetworkTripwire) -> acp.Driver:
    env = {"HOME": str(home), "CODEBUDDY_BASE_URL": server.url, "CODEBUDDY_MAX_RETRIES": "0", **wire.env()}
    return acp.Driver(
        acp.preset(
            "codebuddy",
            command=[bin_, "--acp"],
            env=env,
            secret_env={"CODEBUDDY_API_KEY": API_KEY},
            grace_period=1.0,
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
