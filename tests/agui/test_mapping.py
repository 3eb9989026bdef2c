"""Every adaptor_nb event maps onto AG-UI 1.0 events (ag-ui-protocol types); recorded streams validate cleanly."""

import asyncio
from dataclasses import dataclass, field
from typing import Any

from adaptor_nb import Agent, ApprovalKind, Event, Notice, tool
from adaptor_nb.bridges.agui import EventMapper, frame
from adaptor_nb.drivers import reference as ref

from .frames import findings, one_run


def describe_column(name: str) -> dict[str, float]:
    """Summary statistics of one column."""
    if name == "salary":
        raise tool.reject("salaries are private")
    return {"mean": 41.5}


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


async def test_text_thinking_and_a_tool_call_map_to_their_ag_ui_events_and_validate() -> None:
    scenario = ref.Scenario(
        ref.Turn(
            ref.ThinkingStep("let me look"),
            ref.ToolUse("Read", {"path": "a.txt"}, {"content": "hi"}, id="tc1"),
            ref.Text("the file says hi", chunk=4),
            usage=(10, 5),
        )
    )
    events = await one_run(Agent(ref.Driver(scenario=scenario)).send("go"))
    seen = types(events)
    assert seen[0] == "RUN_STARTED" and seen[1] == "STATE_SNAPSHOT" and seen[-1] == "RUN_FINISHED"
    for kind in (
        "REASONING_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STATE_DELTA",
        "CUSTOM",
    ):
        assert kind in seen, kind
    start = next(e for e in events if e["type"] == "TOOL_CALL_START")
    assert start["toolCallId"] == "tc1" and start["toolCallName"] == "Read"
    args = "".join(e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS")
    assert args.replace(" ", "") == '{"path":"a.txt"}'
    result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
    assert result["toolCallId"] == "tc1" and result["content"] == '{"content":"hi"}'
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "the file says hi"
    text_ids = {e["messageId"] for e in events if e["type"].startswith("TEXT_MESSAGE")}
    assert len(text_ids) == 1
    finished = events[-1]
    assert finished["result"]["text"] == "the file says hi"
    assert finished["usage"][0]["inputTokens"] == 10 and finished["usage"][0]["outputTokens"] == 5
    deltas = [op for e in events if e["type"] == "STATE_DELTA" for op in e["delta"]]
    assert {"op": "replace", "path": "/turns", "value": 1} in deltas
    assert findings(events) == []


async def test_host_tools_map_like_any_tool_and_a_rejection_is_an_error_result() -> None:
    steps = (
        ref.HostCall("describe_column", {"name": "age"}, id="c1"),
        ref.HostCall("describe_column", {"name": "salary"}, id="c2"),
    )
    agent = Agent(ref.Driver(scenario=ref.scenario(ref.Turn(*steps, "done"))), tools=[describe_column])
    events = await one_run(agent.send("go"))
    await agent.close()
    starts = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert [s["toolCallId"] for s in starts] == ["c1", "c2"]
    results = {e["toolCallId"]: e for e in events if e["type"] == "TOOL_CALL_RESULT"}
    assert "41.5" in results["c1"]["content"]
    assert results["c2"].get("metadata") == {"isError": True}
    assert findings(events) == []


async def test_notices_receipts_and_subagents_pass_as_custom_events_named_after_their_type() -> None:
    gate = ref.Gate()
    scenario = ref.Scenario(ref.Turn(ref.Subagent("explore", "found it"), gate, "done"))
    stream = Agent(ref.Driver(scenario=scenario)).send("go")
    collecting = one_run(stream)
    task = asyncio.ensure_future(collecting)
    await gate.reached.wait()
    await stream.send("and also this", id="m1")
    gate.open()
    events = await task
    names = {e["name"] for e in events if e["type"] == "CUSTOM"}
    assert {f"adaptor_nb.{n}" for n in ("Notice", "MessageUpdate", "SubagentUpdate", "TurnEnd", "RunFinished")} <= names
    receipts = [e["value"] for e in events if e["type"] == "CUSTOM" and e["name"] == "adaptor_nb.MessageUpdate"]
    assert receipts[-1]["id"] == "m1" and receipts[-1]["state"] == 2
    assert findings(events) == []


@dataclass(frozen=True)
class PlanUpdate(Event):
    """An event type the mapper has no rule for."""

    steps: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    blob: bytes = b""


def test_an_event_type_without_a_rule_passes_through_as_custom_with_json_safe_data() -> None:
    (ev,) = EventMapper("run1").map(
        PlanUpdate(
            steps=("a", "b"), details={"when": ApprovalKind.QUESTION, "n": float("nan"), 3: object}, blob=b"\x00"
        )
    )
    data = ev.model_dump(by_alias=True, mode="json")
    assert data["type"] == "CUSTOM" and data["name"] == "adaptor_nb.PlanUpdate"
    assert data["value"]["steps"] == ["a", "b"] and data["value"]["blob"] == {"base64": "AA=="}
    assert data["value"]["details"]["when"] == "question" and data["value"]["details"]["n"] == "nan"
    assert "3" in data["value"]["details"]


def test_notice_kinds_and_their_data_are_carried_verbatim() -> None:
    (ev,) = EventMapper("run1").map(Notice(kind="claude.protocol_error", text="odd line", data={"line": "{"}))
    value = ev.model_dump(by_alias=True, mode="json")["value"]
    assert value["kind"] == "claude.protocol_error" and value["text"] == "odd line" and value["data"] == {"line": "{"}


async def test_a_failed_run_ends_with_run_error_and_a_cancelled_one_with_the_cancelled_outcome() -> None:
    failing = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("partial ", ref.Fail("the model broke")))))
    events = await one_run(failing.send("go"))
    assert events[-1]["type"] == "RUN_ERROR" and "the model broke" in events[-1]["message"]
    assert events[-1]["code"] == "agent_error"
    assert "TEXT_MESSAGE_END" in types(events)
    assert findings(events) == []
    gate = ref.Gate()
    stream = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("x", gate)))).send("go")
    task = asyncio.ensure_future(one_run(stream))
    await gate.reached.wait()
    stream.cancel()
    events = await task
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"] == {"type": "cancelled"}
    assert findings(events) == []


async def test_permission_and_question_requests_become_interrupts() -> None:
    scenario = ref.Scenario(
        ref.Turn(ref.ToolUse("Bash", {"command": "ls"}, {"ok": True}, approval=ApprovalKind.PERMISSION, id="tc9"))
    )
    stream = Agent(ref.Driver(scenario=scenario)).send("go")
    async for ev in stream.events():
        if type(ev).__name__ == "ApprovalRequest":
            data = frame.interrupted("t", "r1", [ev]).model_dump(by_alias=True, mode="json")
            (intr,) = data["outcome"]["interrupts"]
            assert intr["id"] == ev.id and intr["reason"] == "tool_approval" and intr["toolCallId"] == "tc9"
            assert intr["responseSchema"]["required"] == ["approved"]
            ev.deny("not now")
    asking = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(ref.Ask("Which?", ("a", "b")))))).send("go")
    async for ev in asking.events():
        if type(ev).__name__ == "ApprovalRequest":
            data = frame.interrupted("t", "r1", [ev]).model_dump(by_alias=True, mode="json")
            (intr,) = data["outcome"]["interrupts"]
            assert intr["reason"] == "question" and [c["key"] for c in intr["metadata"]["choices"]] == ["a", "b"]
            ev.answer("a")
