"""Supplemental messages on the real CodeBuddy Code CLI: SOON through ``steer`` into the running turn, AFTER_TURN as
the next user line, INTERRUPT through the ``interrupt`` control request, and an interrupt that leaves no result."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path

import pytest
from _support import of

from adaptor_nb import (
    Agent,
    ApprovalRequest,
    MessageState,
    Notice,
    TextDelta,
    Timing,
    ToolCall,
    TurnEnd,
)
from adaptor_nb.testing import ChatReply, FakeChatCompletionsServer

from .conftest import DriverFactory

pytestmark = pytest.mark.codebuddy

STEER_TAG = 'data-role=\\"message-queue\\"'


async def test_a_soon_message_is_steered_into_the_running_turn(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    gate = threading.Event()
    fake.enqueue(ChatReply.text("a long streaming answer that is held", hold=gate, hold_after=2))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        stream = agent.send("begin")
        events = []
        try:
            async for ev in stream.events():
                events.append(ev)
                if isinstance(ev, TextDelta) and ev.text and not gate.is_set():
                    await stream.send("also this [[say steered answer]]", id="m-soon")
                if isinstance(ev, Notice) and ev.metadata.get("code") == "codebuddy.steered":
                    gate.set()  # the CLI acknowledged the steer: let the held model response finish
            result = await stream.result()
        finally:
            gate.set()
    assert result.turns == 1 and result.text == "steered answer"
    [outcome] = result.messages()
    assert (outcome.state, outcome.boundary, outcome.mechanism) == (MessageState.DELIVERED, "in_run", "steer")
    assert outcome.turn == 1
    [turn_end] = of(events, TurnEnd)
    assert turn_end.message_ids == ("m-soon",)
    first, second = fake.model_requests
    # Never a raw user line: the text reaches the same session's next request inside the CLI's message-queue reminder.
    assert STEER_TAG in json.dumps(second.messages) and "also this" in json.dumps(second.messages)
    assert second.headers.get("x-conversation-id") == first.headers.get("x-conversation-id")
    begin, steered = second.user_queries()
    assert begin == "begin" and steered.startswith('<system-reminder data-role="message-queue">')


async def test_a_soon_message_during_an_approval_joins_the_turn_after_the_tool(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fake.enqueue(ChatReply.tool("Bash", {"command": "echo tooled", "description": "echo"}))
    fake.enqueue(ChatReply.text("finished with the note"))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        stream = agent.send("run it")
        asked: list[ApprovalRequest] = []
        async for ev in stream.events():
            if isinstance(ev, ApprovalRequest):
                asked.append(ev)
                await stream.send("note from the host", id="m-tool")
            if isinstance(ev, Notice) and ev.metadata.get("code") == "codebuddy.steered":
                asked[0].approve()  # the steer is in before the tool runs
        result = await stream.result()
    assert result.turns == 1 and result.text == "finished with the note"
    [outcome] = result.messages()
    assert (outcome.state, outcome.boundary, outcome.mechanism) == (MessageState.DELIVERED, "in_run", "steer")
    after_tool = fake.model_requests[-1]
    assert after_tool.tool_outputs and "tooled" in after_tool.tool_outputs[-1]
    assert "note from the host" in json.dumps(after_tool.messages)


async def test_an_after_turn_message_starts_a_second_turn(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    gate = threading.Event()
    fake.enqueue(ChatReply.text("first part of it", hold=gate, hold_after=2))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        stream = agent.send("begin")
        try:
            async for ev in stream.events():
                if isinstance(ev, TextDelta) and ev.text and not gate.is_set():
                    await stream.send("now the second [[say second answer]]", when=Timing.AFTER_TURN, id="m-after")
                    gate.set()
            result = await stream.result()
        finally:
            gate.set()
    assert result.turns == 2 and result.text == "second answer"
    [outcome] = result.messages()
    assert (outcome.state, outcome.boundary, outcome.mechanism) == (MessageState.DELIVERED, "turn_end", "stdin")
    assert outcome.turn == 2
    first, second = fake.model_requests
    assert first.prompt == "begin" and "now the second [[say second answer]]" in second.prompt


async def test_an_interrupt_message_stops_the_streaming_turn_and_opens_the_next(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    gate = threading.Event()
    fake.enqueue(ChatReply.text("a very long answer that never finishes", hold=gate, hold_after=2))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        stream = agent.send("begin")
        try:
            async for ev in stream.events():
                if isinstance(ev, TextDelta) and ev.text and not gate.is_set():
                    await stream.send("stop and say hi [[say interrupted hi]]", when=Timing.INTERRUPT, id="m-int")
            result = await stream.result()
        finally:
            gate.set()
    assert result.turns == 2 and result.text == "interrupted hi"
    [outcome] = result.messages()
    assert (outcome.state, outcome.boundary, outcome.mechanism) == (MessageState.DELIVERED, "interrupt", "interrupt")
    assert outcome.turn == 2
    last = fake.model_requests[-1]
    assert "stop and say hi [[say interrupted hi]]" in last.prompt
    assert "turn_aborted" in json.dumps(last.messages)  # the same session goes on, told of the interruption


async def test_an_interrupt_while_a_tool_runs_kills_it_and_the_message_opens_the_next_turn(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    fifo = workspace / "never-written"
    os.mkfifo(fifo)  # the tool's `cat` blocks on it until the interrupt kills the tool
    async with Agent(
        make_driver(permission_mode="acceptEdits", allowed_tools=["Bash"]), workspace=str(workspace)
    ) as agent:
        thread = agent.thread("t")
        first = await thread.send("[[say warm]]").result()
        fake.enqueue(
            ChatReply.tool("Bash", {"command": f"cat {fifo} && touch {workspace / 'after'}", "description": "x"})
        )
        stream = thread.send("run the tool")
        writers = []
        async for ev in stream.events():
            if isinstance(ev, ToolCall) and not writers:
                # Opening the FIFO for writing returns once the tool's `cat` opened it: the tool is running now.
                writers.append(await asyncio.to_thread(open, fifo, "w"))
                await stream.send("forget it [[say stopped]]", when=Timing.INTERRUPT, id="m-int")
        result = await stream.result()
        writers[0].close()
        third = await thread.send("[[say still here]]").result()
    assert first.text == "warm"
    assert result.turns == 2 and result.text == "stopped"
    [outcome] = result.messages()
    assert (outcome.state, outcome.boundary, outcome.mechanism) == (MessageState.DELIVERED, "interrupt", "interrupt")
    assert not (workspace / "after").exists()
    # The same session goes on: the next send on the Thread sees the whole history.
    assert third.text == "still here"
    assert fake.model_requests[-1].user_queries()[0] == "[[say warm]]"


async def test_a_soon_message_racing_the_end_of_the_turn_reaches_the_model_exactly_once(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    """The held answer is released the moment the message is admitted: the CLI either takes the steer into the turn
    or refuses it as "idle"; the driver then writes it after the result. Either way it is delivered exactly once."""
    outcomes = []
    for attempt in range(3):
        gate = threading.Event()
        fake.enqueue(ChatReply.text("a short answer", hold=gate, hold_after=2))
        async with Agent(make_driver(), workspace=str(workspace)) as agent:
            stream = agent.send(f"begin {attempt}")
            try:
                async for ev in stream.events():
                    if isinstance(ev, TextDelta) and ev.text and not gate.is_set():
                        await stream.send(f"note {attempt} [[say noted {attempt}]]", id=f"m-{attempt}")
                        gate.set()
                result = await stream.result()
            finally:
                gate.set()
        [outcome] = result.messages()
        assert outcome.state is MessageState.DELIVERED
        assert (outcome.boundary, outcome.mechanism) in {("in_run", "steer"), ("turn_end", "stdin")}
        assert result.text == f"noted {attempt}" and result.turns == (1 if outcome.boundary == "in_run" else 2)
        outcomes.append(outcome.boundary)
    for attempt in range(3):
        # Counted in the requests that carry it as the newest input: once per attempt, never twice.
        newest = [r for r in fake.model_requests if f"note {attempt} " in json.dumps(r.messages[-1])]
        assert len(newest) == 1, (attempt, outcomes)
