"""Supplemental messages on the real Codex CLI: SOON steers the turn, AFTER_TURN starts the next, INTERRUPT stops
the turn and continues with the message."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaptor_nb import (
    Agent,
    ApprovalMode,
    ApprovalPolicy,
    ApprovalRequest,
    MessagePolicy,
    MessageState,
    MessageUpdate,
    Policy,
    SandboxLevel,
    Timing,
    TurnEnd,
)
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._openai import Reply

from .conftest import DriverFactory
from .helpers import Watcher, of

pytestmark = pytest.mark.codex

HELD = "first [[hold g]] [[say first answer]]"


def delivered(ev: object) -> bool:
    return isinstance(ev, MessageUpdate) and ev.state is MessageState.DELIVERED


async def test_soon_steers_the_running_turn(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        stream = agent.send(HELD)
        watch = Watcher(stream)
        await fake.model_request(1)
        await stream.send("also mention cats [[say steered answer]]", id="m-soon", when=Timing.SOON)
        update = await watch.wait_for(delivered)
        fake.hold("g").set()
        _events, result, error = await watch.finish()
    assert error is None and result is not None
    assert isinstance(update, MessageUpdate)
    assert (update.id, update.boundary, update.mechanism, update.turn) == ("m-soon", "in_run", "turn/steer", 1)
    assert result.turns == 1
    assert result.text == "steered answer"
    last = fake.model_requests[-1]
    assert any("also mention cats" in t for t in last.user_texts())
    assert HELD in last.user_texts()
    (outcome,) = result.messages()
    assert outcome.state is MessageState.DELIVERED
    assert [i.kind for i in result.transcript()].count("message") == 1


async def test_after_turn_starts_the_next_turn_with_the_message(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        stream = agent.send(HELD)
        watch = Watcher(stream)
        await fake.model_request(1)
        await stream.send("now the follow-up [[say second answer]]", id="m-after", when=Timing.AFTER_TURN)
        fake.hold("g").set()
        events, result, error = await watch.finish()
    assert error is None and result is not None
    assert result.turns == 2
    assert result.text == "second answer"
    assert [(t.turn, t.result.text if t.result else None) for t in of(events, TurnEnd)] == [
        (1, "first answer"),
        (2, "second answer"),
    ]
    (update,) = [u for u in of(events, MessageUpdate) if u.state is MessageState.DELIVERED]
    assert (update.boundary, update.mechanism, update.turn) == ("turn_end", "turn/start", 2)
    assert of(events, TurnEnd)[1].message_ids == ("m-after",)
    second = fake.model_requests[-1]
    assert any("now the follow-up" in t for t in second.user_texts())
    assert "first answer" in "\n".join(second.texts("assistant"))


async def test_interrupt_stops_the_turn_and_continues_with_the_message(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        stream = agent.send(HELD)
        watch = Watcher(stream)
        await fake.model_request(1)
        await stream.send("stop, do this instead [[say redirected]]", id="m-int", when=Timing.INTERRUPT)
        await watch.wait_for(delivered)
        fake.hold("g").set()
        events, result, error = await watch.finish()
    assert error is None and result is not None
    assert result.turns == 2
    assert result.text == "redirected"
    (update,) = [u for u in of(events, MessageUpdate) if u.state is MessageState.DELIVERED]
    assert (update.boundary, update.mechanism, update.turn) == ("interrupt", "turn/interrupt", 2)
    after = fake.model_requests[-1]
    assert any(t.startswith("<turn_aborted>") for t in after.texts("user"))
    assert any("stop, do this instead" in t for t in after.user_texts())
    assert "first answer" not in "\n".join(after.texts("assistant"))


async def test_messages_beyond_the_turn_limit_are_reported_undelivered(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    from adaptor_nb import MessageFailure, MessagePolicy, Policy

    policy = Policy(messages=MessagePolicy(max_turns=1))
    async with Agent(make_driver(), workspace=str(workspace), policy=policy) as agent:
        stream = agent.send(HELD)
        watch = Watcher(stream)
        await fake.model_request(1)
        await stream.send("too late", id="m-late", when=Timing.AFTER_TURN)
        fake.hold("g").set()
        _, result, error = await watch.finish()
    assert error is None and result is not None
    assert result.turns == 1
    (late,) = result.undelivered()
    assert (late.id, late.reason, late.text) == ("m-late", MessageFailure.LIMIT_EXCEEDED, "too late")
    assert len(fake.model_requests) == 1


async def test_an_interrupt_withdraws_a_pending_approval(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(Reply.exec_command("touch made.txt", sandbox_permissions="require_escalated", justification="x"))
    ask = ApprovalPolicy(permission=ApprovalMode.ASK, timeout=-1)
    policy = Policy(sandbox=SandboxLevel.READ_ONLY, approvals=ask)
    async with Agent(make_driver(), workspace=str(workspace), policy=policy) as agent:
        stream = agent.send("make a file")
        watch = Watcher(stream)
        request = await watch.wait_for(lambda e: isinstance(e, ApprovalRequest))
        await stream.send("never mind [[say changed course]]", when=Timing.INTERRUPT)
        _events, result, error = await watch.finish()
    assert error is None and result is not None
    assert isinstance(request, ApprovalRequest)
    assert request.state == "expired"
    assert (result.turns, result.text) == (2, "changed course")
    assert not (workspace / "made.txt").exists()


async def test_wrap_up_guidance_goes_out_with_the_continuation_near_the_turn_limit(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    policy = Policy(messages=MessagePolicy(max_turns=2))  # limit.approaching after turn 1
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        stream = agent.send(HELD, policy=policy)
        watch = Watcher(stream)
        await fake.model_request(1)
        await stream.send("and finally [[say second answer]]", id="m-last", when=Timing.AFTER_TURN)
        fake.hold("g").set()
        _events, result, error = await watch.finish()
    assert error is None and result is not None
    assert result.turns == 2 and result.text == "second answer"
    sent = "\n".join(fake.model_requests[-1].user_texts())
    assert "and finally" in sent and "1 of 2 turns are used" in sent and "Wrap up" in sent
    (outcome,) = result.messages()
    assert outcome.text == "and finally [[say second answer]]"
