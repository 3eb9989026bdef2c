"""What the run view says in the first hour: the model while running, structured values, interrupts, wording."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from adaptor_nb import (
    Agent,
    ApprovalKind,
    ApprovalPolicy,
    ApprovalRequest,
    Notice,
    Policy,
    QuestionMode,
    RunStarted,
    TextDelta,
    ThreadBusyError,
)
from adaptor_nb._views._model import INTERRUPTED, RunState
from adaptor_nb._views._static import run_html
from adaptor_nb.drivers.reference import Ask, Driver, Gate, Text, ToolUse, Turn, WaitForMessage, scenario


class Row(BaseModel):
    name: str
    n: int


async def fold(agent: Any, prompt: str = "go", **options: Any) -> RunState:
    state = RunState(driver="reference")
    async for event in agent.send(prompt, **options).events():
        state.apply(event)
    return state


def texts(state: RunState) -> list[str]:
    return [i["text"] for i in state.items if i["kind"] == "text"]


async def test_structured_output_shows_the_value_not_the_wrapper() -> None:
    agent = Agent(Driver())
    state = await fold(agent, "rows", schema=list[Row])
    (shown,) = texts(state)
    assert '"items"' not in shown
    assert shown.startswith("```json\n[") and '"name": "example 1"' in shown
    assert "{&quot;items&quot;" not in run_html(state.header, state.items, {}, [], state.footer)
    await agent.close()


async def test_the_model_is_in_the_header_while_running() -> None:
    state = RunState(driver="claude")
    state.apply(RunStarted(run_id="r"))
    state.apply(Notice(kind="invocation", text="session s", metadata={"code": "claude.init", "model": "m-1"}))
    assert state.header["state"] == "running" and state.header["model"] == "m-1"


async def test_a_transient_status_line_is_not_an_item() -> None:
    state = RunState(driver="claude")
    state.apply(Notice(kind="lifecycle", text="status: requesting", metadata={"code": "claude.status"}))
    assert [i for i in state.items if i["kind"] == "notice"] == []


async def test_an_interrupt_is_reported_as_interrupted() -> None:
    gate = Gate()
    agent = Agent(Driver(scenario=scenario(Turn(Text("working"), gate))))
    stream = agent.send("go")
    state = RunState(driver="reference")
    async for event in stream.events():
        state.apply(event)
        if isinstance(event, TextDelta) and event.text:
            stream._ex.cancel(INTERRUPTED)  # what Kernel > Interrupt does to a %%agent run
    assert state.header["state"] == "interrupted" and state.footer["status"] == "interrupted"
    assert "interrupted" in state.header["error"] and "cancelled by the caller" not in state.header["error"]
    await agent.close()


async def test_reference_text_blocks_are_joined_with_a_space() -> None:
    agent = Agent(Driver(scenario=scenario(Turn(Text("It fails."), Text("The help says so."), Text(" Done.")))))
    result = await agent.send("go").result()
    assert result.text == "It fails. The help says so. Done."
    await agent.close()


async def test_direct_sends_of_the_reference_driver_leave_no_files(tmp_path: Path) -> None:
    agent = Agent(Driver(state_dir=str(tmp_path)))
    await agent.send("one-off").result()
    assert os.listdir(tmp_path) == []
    await agent.thread("kept").send("continued later").result()
    assert len(os.listdir(tmp_path)) == 1  # a thread's session is still kept
    await agent.close()


async def test_thread_busy_says_what_to_do_next() -> None:
    gate = Gate()
    agent = Agent(Driver(scenario=scenario(Turn(gate))))
    thread = agent.thread("t")
    first = thread.send("one")
    second = thread.send("two")
    with pytest.raises(ThreadBusyError) as info:
        await second.result()
    gate.open()
    await first.result()
    text = str(info.value)
    assert "wait for it to finish" in text and "another thread key" in text
    await agent.close()


# -- tool and approval cards, sent messages, denials ---------------------------------------------------------


def kinds(state: RunState) -> list[str]:
    return [i["kind"] for i in state.items if i["kind"] != "notice"]


def only(state: RunState, kind: str) -> dict[str, Any]:
    (item,) = [i for i in state.items if i["kind"] == kind]
    return item


async def test_a_permission_card_sits_under_its_tool_which_waits_for_it() -> None:
    bash = ToolUse("Bash", {"command": "ls"}, {"output": "a.txt"}, approval=ApprovalKind.PERMISSION)
    agent = Agent(Driver(scenario=scenario(Turn(bash, Text("ok")))))
    state = RunState(driver="reference")
    seen: list[tuple[list[str], str]] = []
    async for event in agent.send("go").events():
        state.apply(event)
        if isinstance(event, ApprovalRequest):
            seen.append((kinds(state), only(state, "tool")["state"]))
            event.approve()
    assert seen == [(["tool", "approval"], "waiting")]
    assert kinds(state) == ["tool", "approval", "text"]
    assert only(state, "tool")["state"] == "done" and only(state, "approval")["state"] == "approved"
    await agent.close()


async def test_a_question_card_also_sits_under_its_tool() -> None:
    agent = Agent(Driver(scenario=scenario(Turn(Ask("Which branch?", ("main", "dev")), Text("ok")))))
    state = RunState(driver="reference")
    ask = Policy(approvals=ApprovalPolicy(question=QuestionMode.ASK))
    async for event in agent.send("go", policy=ask).events():
        state.apply(event)
        if isinstance(event, ApprovalRequest):
            assert kinds(state) == ["tool", "approval"] and only(state, "tool")["state"] == "waiting"
            event.answer("dev")
    assert kinds(state) == ["tool", "approval", "text"]
    assert only(state, "approval")["outcome"] == "answered: dev" and only(state, "tool")["state"] == "done"
    await agent.close()


async def test_a_denial_is_reported_once_in_words() -> None:
    bash = ToolUse("Bash", {"command": "rm -rf build"}, {"output": ""}, approval=ApprovalKind.PERMISSION)
    agent = Agent(Driver(scenario=scenario(Turn(bash, Text("ok")))))
    state = RunState(driver="reference")
    async for event in agent.send("go").events():
        state.apply(event)
        if isinstance(event, ApprovalRequest):
            event.deny("not on this branch")
    shown = [str(v) for i in state.items for k, v in i.items() if k in ("text", "result", "outcome")]
    shown.append(state.header["error"])
    assert sum(s.count("not on this branch") for s in shown) == 1
    assert only(state, "approval")["outcome"] == "denied: not on this branch"
    assert only(state, "tool")["state"] == "denied" and only(state, "tool")["result"] == ""
    assert state.header["error"] == "The run stopped because a request above was denied."
    assert "approval_denied" not in " ".join(shown)
    await agent.close()


async def test_a_sent_message_appears_where_it_was_delivered() -> None:
    agent = Agent(Driver(scenario=scenario(Turn(Text("Waiting."), WaitForMessage(), Text("Thanks.")))))
    stream = agent.send("go")
    state = RunState(driver="reference")
    sent = False
    async for event in stream.events():
        state.apply(event)
        if isinstance(event, TextDelta) and event.text and not sent:
            sent = True
            state.add_message("m1", "use tabs", "soon")  # what the view's message box does
            await stream.send("use tabs", id="m1")
    assert [(i["kind"], i["text"]) for i in state.items if i["kind"] != "notice"] == [
        ("text", "Waiting."),
        ("message", "use tabs"),
        ("text", "Thanks."),
    ]
    assert only(state, "message")["words"] == "delivered while the agent worked"
    await agent.close()


def test_pending_and_refused_messages_are_said_in_plain_words() -> None:
    state = RunState(driver="reference")
    state.add_message("m1", "later please", "after_turn")
    state.message_result("m1")
    (entry,) = state.messages
    assert entry["words"] == "queued for the next turn" and "placed" not in entry
    state.finish(None, None)
    assert entry["words"] == "not delivered: the run ended first"
    assert only(state, "message")["words"] == entry["words"]  # in the transcript now, not under it


async def test_the_reference_model_is_in_the_header_before_the_end() -> None:
    agent = Agent(Driver(scenario=scenario(Turn(Text("hi")), model="demo-model")))
    state = RunState(driver="reference")
    models = []
    async for event in agent.send("go").events():
        state.apply(event)
        models.append(state.header["model"] if not state.finished else None)
    assert "demo-model" in models[:-1]  # before Done
    await agent.close()
