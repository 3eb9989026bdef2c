"""Supplemental messages on the real CLI: in-run during a tool, at turn end, and through an interrupt."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from adaptor_nb import (
    ApprovalRequest,
    MessageFailure,
    MessagePolicy,
    MessageState,
    MessageUpdate,
    Policy,
    TextDelta,
    Timing,
    TurnEnd,
)
from adaptor_nb.testing._anthropic import FakeAnthropicServer, Reply

from .helpers import of

pytestmark = pytest.mark.claude


def touch(path: Path) -> str:
    return "[[tool Bash " + json.dumps({"command": f"touch {path}", "description": "create"}) + "]]"


async def test_message_during_a_tool_joins_the_same_turn(agent_factory, fake: FakeAnthropicServer, workspace) -> None:
    stream = agent_factory().send(f"work {touch(workspace / 'x')} [[say all done]]")
    events = []
    async for ev in stream.events():
        events.append(ev)
        if isinstance(ev, ApprovalRequest):
            await stream.send("also mention the weather", id="m-tool")
            ev.approve()
    result = await stream.result()
    assert result.turns == 1
    [outcome] = result.messages()
    assert (outcome.state, outcome.boundary, outcome.mechanism) == (MessageState.DELIVERED, "in_run", "stdin")
    assert outcome.turn == 1
    states = [u.state for u in of(events, MessageUpdate) if u.id == "m-tool"]
    assert states == [MessageState.ACCEPTED, MessageState.DELIVERED]
    [turn_end] = of(events, TurnEnd)
    assert turn_end.message_ids == ("m-tool",)
    after_tool = fake.message_requests[-1]
    assert "also mention the weather" in json.dumps(after_tool.messages)
    assert [i.kind for i in result.transcript()].count("message") == 1


async def test_after_turn_message_starts_a_second_turn(agent_factory, fake: FakeAnthropicServer) -> None:
    gate = threading.Event()
    fake.enqueue(Reply.text("first part", chunks=3, hold=gate))
    stream = agent_factory().send("begin")
    async for ev in stream.events():
        if isinstance(ev, TextDelta) and ev.text and not gate.is_set():
            await stream.send("now the second [[say second answer]]", when=Timing.AFTER_TURN, id="m-after")
            gate.set()
    result = await stream.result()
    assert result.turns == 2
    assert result.text == "second answer"
    [outcome] = result.messages()
    assert (outcome.state, outcome.boundary, outcome.mechanism) == (MessageState.DELIVERED, "turn_end", "stdin")
    assert outcome.turn == 2
    assert len(fake.message_requests) == 2
    assert "now the second" in fake.message_requests[1].prompt


async def test_soon_message_while_text_streams_waits_for_turn_end(agent_factory, fake: FakeAnthropicServer) -> None:
    gate = threading.Event()
    fake.enqueue(Reply.text("streaming", chunks=3, hold=gate))
    stream = agent_factory().send("begin")
    async for ev in stream.events():
        if isinstance(ev, TextDelta) and ev.text and not gate.is_set():
            await stream.send("soon please [[say soon answer]]", id="m-soon")
            gate.set()
    result = await stream.result()
    assert result.turns == 2 and result.text == "soon answer"
    [outcome] = result.messages()
    assert (outcome.boundary, outcome.mechanism) == ("turn_end", "stdin")


async def test_interrupt_message_stops_the_turn_and_continues_with_it(agent_factory, fake: FakeAnthropicServer) -> None:
    gate = threading.Event()
    fake.enqueue(Reply.text("a very long answer", chunks=4, hold=gate))
    stream = agent_factory().send("begin")
    try:
        async for ev in stream.events():
            if isinstance(ev, TextDelta) and ev.text and not gate.is_set():
                await stream.send("stop and say hi [[say interrupted hi]]", when=Timing.INTERRUPT, id="m-int")
        result = await stream.result()
    finally:
        gate.set()
    assert result.turns == 2
    assert result.text == "interrupted hi"
    [outcome] = result.messages()
    assert (outcome.state, outcome.boundary, outcome.mechanism) == (MessageState.DELIVERED, "interrupt", "interrupt")
    assert outcome.turn == 2
    assert "[Request interrupted by user]" in json.dumps(fake.message_requests[-1].messages)


async def test_turn_limit_fails_pending_messages(agent_factory, fake: FakeAnthropicServer) -> None:
    gate = threading.Event()
    fake.enqueue(Reply.text("only turn", chunks=2, hold=gate))
    policy = Policy(messages=MessagePolicy(max_turns=1))
    stream = agent_factory(policy=policy).send("begin")
    async for ev in stream.events():
        if isinstance(ev, TextDelta) and ev.text and not gate.is_set():
            await stream.send("one more [[say never]]", when=Timing.AFTER_TURN, id="m-late")
            gate.set()
    result = await stream.result()
    assert result.turns == 1 and result.text == "only turn"
    [outcome] = result.undelivered()
    assert outcome.reason is MessageFailure.LIMIT_EXCEEDED and outcome.text == "one more [[say never]]"
    assert len(fake.message_requests) == 1


async def test_messages_on_a_thread_process_across_sends(agent_factory, fake: FakeAnthropicServer) -> None:
    gate = threading.Event()
    thread = agent_factory().thread("chat")
    await thread.send("warm up [[say warm]]").result()
    fake.enqueue(Reply.text("held", chunks=2, hold=gate))
    stream = thread.send("second run")
    async for ev in stream.events():
        if isinstance(ev, TextDelta) and ev.text and not gate.is_set():
            await stream.send("add this [[say with addition]]", when=Timing.AFTER_TURN)
            gate.set()
    result = await stream.result()
    assert result.turns == 2 and result.text == "with addition"
    third = await thread.send("third [[say third]]").result()
    assert third.text == "third" and third.turns == 1


async def test_an_interrupt_at_the_turn_limit_fails_the_message(agent_factory, fake: FakeAnthropicServer) -> None:
    gate = threading.Event()
    fake.enqueue(Reply.text("cut short", chunks=4, hold=gate))
    stream = agent_factory(policy=Policy(messages=MessagePolicy(max_turns=1))).send("begin")
    try:
        async for ev in stream.events():
            if isinstance(ev, TextDelta) and ev.text and not gate.is_set():
                await stream.send("too late [[say never]]", when=Timing.INTERRUPT, id="m-late-int")
        result = await stream.result()
    finally:
        gate.set()
    assert result.turns == 1
    [outcome] = result.undelivered()
    assert outcome.reason is MessageFailure.LIMIT_EXCEEDED and outcome.text == "too late [[say never]]"
    assert len(fake.message_requests) == 1


async def test_wrap_up_guidance_goes_out_with_the_continuation_near_the_turn_limit(
    agent_factory, fake: FakeAnthropicServer
) -> None:
    gate = threading.Event()
    fake.enqueue(Reply.text("first part", chunks=3, hold=gate))
    policy = Policy(messages=MessagePolicy(max_turns=2))  # limit.approaching after turn 1
    stream = agent_factory().send("begin", policy=policy)
    async for ev in stream.events():
        if isinstance(ev, TextDelta) and ev.text and not gate.is_set():
            await stream.send("and finally [[say closing answer]]", when=Timing.AFTER_TURN, id="m-last")
            gate.set()
    result = await stream.result()
    assert result.turns == 2 and result.text == "closing answer"
    assert len(fake.message_requests) == 2
    sent = fake.message_requests[1].prompt
    assert "and finally" in sent and "1 of 2 turns are used" in sent and "Wrap up" in sent
    [outcome] = result.messages()
    assert outcome.text == "and finally [[say closing answer]]"  # the host's words, without the guidance
