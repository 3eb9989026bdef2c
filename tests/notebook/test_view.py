"""The run view against real runs of the reference driver: what it shows, clicks, messages and coalescing."""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from typing import Any

import comm
import pytest
from _support import StubDriver

from adaptor_nb import Agent, ApprovalKind, Done, Dropped, Result, TextDelta, approve_all
from adaptor_nb._views._model import KEEP_CHARS, RunState
from adaptor_nb.driver import DriverOutcome, Invocation, RunContext
from adaptor_nb.drivers.reference import (
    Ask,
    Driver,
    Gate,
    PlanReview,
    Subagent,
    Text,
    ThinkingStep,
    ToolUse,
    Turn,
    WaitForMessage,
    scenario,
)
from adaptor_nb.notebook import RunView


class CountingComm(comm.base_comm.BaseComm):  # type: ignore[misc]
    """A comm that records what a widget would send to the front end."""

    sent: list[dict[str, Any]]

    def __init__(self, **kwargs: Any) -> None:
        self.sent = []
        super().__init__(**kwargs)

    def publish_msg(
        self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None, **keys: Any
    ) -> None:
        self.sent.append({"msg_type": msg_type, "data": data})


@pytest.fixture
def comms(monkeypatch: pytest.MonkeyPatch) -> list[CountingComm]:
    made: list[CountingComm] = []

    def create(**kwargs: Any) -> CountingComm:
        c = CountingComm(**kwargs)
        made.append(c)
        return c

    monkeypatch.setattr(comm, "create_comm", create)
    return made


def items(view: RunView, kind: str) -> list[dict[str, Any]]:
    return [i for i in view.items if i["kind"] == kind]


async def run_view(agent: Agent, prompt: str = "go", **options: Any) -> tuple[RunView, Done]:
    stream = agent.send(prompt, **options)
    view = RunView(driver="reference")
    done = await view.consume(stream)
    return view, done


async def test_text_tools_thinking_and_subagents_end_in_the_widget_state(comms: list[CountingComm]) -> None:
    agent = Agent(
        Driver(
            scenario=scenario(
                Turn(
                    ThinkingStep("Consider the repo."),
                    Text("Looking around. " * 20, chunk=5),
                    ToolUse("Read", {"path": "a.py"}, {"output": "print(1)"}),
                    ToolUse("Bash", {"command": "false"}, {"output": "exit 1"}, is_error=True),
                    Subagent("explore tests", summary="found 3 tests"),
                    Text("All done."),
                )
            )
        )
    )
    view, done = await run_view(agent)
    assert done.err is None and done.result is not None
    assert view.header["state"] == "done" and view.live == {}
    texts = [i["text"] for i in items(view, "text")]
    assert texts == ["Looking around. " * 20, "All done."]
    (thinking,) = items(view, "thinking")
    assert thinking["text"] == "Consider the repo."
    read, bash = items(view, "tool")
    assert (read["name"], json.loads(read["text"]), read["result"], read["state"]) == (
        "Read",
        {"path": "a.py"},
        "print(1)",
        "done",
    )
    assert bash["state"] == "error"
    (sub,) = items(view, "subagent")
    assert sub["state"] == "completed" and sub["summary"] == "found 3 tests"
    assert view.footer["turns"] == 1 and view.footer["status"] == "done"
    assert view.footer["input_tokens"] == done.result.usage.input_tokens  # type: ignore[union-attr]
    await agent.close()


async def test_long_tool_output_is_cut_with_a_count(comms: list[CountingComm]) -> None:
    big = "x" * (KEEP_CHARS + 500)
    agent = Agent(Driver(scenario=scenario(Turn(ToolUse("Read", {}, {"output": big}), Text("ok")))))
    view, _ = await run_view(agent)
    (tool,) = items(view, "tool")
    assert len(tool["result"]) == KEEP_CHARS and tool["truncated"] == 500
    await agent.close()


async def test_auto_approvals_still_show_a_card_with_the_outcome(comms: list[CountingComm]) -> None:
    agent = Agent(
        Driver(scenario=scenario(Turn(ToolUse("Edit", {"file": "a"}, {"ok": True}, approval=ApprovalKind.PERMISSION))))
    )
    view, done = await run_view(agent, on_approval=approve_all())
    assert done.err is None
    (card,) = items(view, "approval")
    assert card["state"] == "approved" and card["tool"] == "Edit" and '"file": "a"' in card["args"]
    await agent.close()


async def test_plan_review_card_shows_the_plan(comms: list[CountingComm]) -> None:
    agent = Agent(Driver(scenario=scenario(Turn(PlanReview("1. read\n2. fix"), Text("ok")))))
    view, done = await run_view(agent, on_approval=approve_all())
    assert done.err is None
    (card,) = items(view, "approval")
    assert card["akind"] == "plan_review" and card["args"] == "1. read\n2. fix" and card["state"] == "approved"
    await agent.close()


async def test_clicks_from_another_thread_resolve_a_question_once(comms: list[CountingComm]) -> None:
    agent = Agent(Driver(scenario=scenario(Turn(Ask("Which branch?", ("main", "dev")), Text("ok")))))
    from adaptor_nb import ApprovalPolicy, Policy, QuestionMode

    stream = agent.send("go", policy=Policy(approvals=ApprovalPolicy(question=QuestionMode.ASK, timeout=-1)))
    view = RunView(driver="reference")
    consumer = asyncio.ensure_future(view.consume(stream))
    (card,) = await view.until(lambda v: items(v, "approval"))
    assert card["akind"] == "question" and [c["key"] for c in card["choices"]] == ["main", "dev"]
    assert card["deadline_ms"] == 0

    def click(action: str, answer: str) -> None:
        view.handle_approval({"type": "approval", "request_id": card["request_id"], "action": action, "answer": answer})

    first = threading.Thread(target=click, args=("answer", "dev"))
    first.start()
    first.join()
    second = threading.Thread(target=click, args=("answer", "main"))
    second.start()
    second.join()
    done = await consumer
    assert done.err is None
    (card,) = items(view, "approval")
    assert card["state"] == "answered" and card["outcome"] == "answered: dev"
    assert "already answered" in card["error"]
    tool = items(view, "tool")[0]
    assert json.loads(tool["result"]) == {"answer": "dev"}
    await agent.close()


async def test_message_typed_in_the_view_is_admitted_from_another_thread(comms: list[CountingComm]) -> None:
    agent = Agent(Driver(scenario=scenario(Turn(Text("Waiting."), WaitForMessage(), Text("Thanks.")))))
    stream = agent.send("go")
    view = RunView(driver="reference")
    consumer = asyncio.ensure_future(view.consume(stream))
    await view.until(lambda v: items(v, "text"))
    sender = threading.Thread(
        target=view.handle_message, args=({"type": "message", "id": "m1", "text": "use tabs", "when": "after_turn"},)
    )
    sender.start()
    sender.join()
    done = await consumer
    assert done.err is None
    (message,) = view.messages
    assert (message["id"], message["when"], message["state"]) == ("m1", "after_turn", "delivered")
    assert [m.id for m in done.result.messages()] == ["m1"]  # type: ignore[union-attr]
    await agent.close()


async def test_a_message_after_the_run_is_marked_failed(comms: list[CountingComm]) -> None:
    agent = Agent(Driver())
    view, _ = await run_view(agent)
    view.handle_message({"type": "message", "id": "late", "text": "too late", "when": "soon"})
    await view.finish()
    (message,) = view.messages
    assert message["state"] == "failed" and "not accepting" in message["reason"]
    await agent.close()


async def test_cancel_shows_cancelled(comms: list[CountingComm]) -> None:
    gate = Gate()
    agent = Agent(Driver(scenario=scenario(Turn(Text("start"), gate, Text("never")))))
    stream = agent.send("go")
    view = RunView(driver="reference")
    consumer = asyncio.ensure_future(view.consume(stream))
    await gate.reached.wait()
    stream.cancel()
    done = await consumer
    assert done.err is not None
    assert view.header["state"] == "cancelled" and view.accepting is False
    await agent.close()


async def test_updates_are_coalesced_into_few_spaced_sends(comms: list[CountingComm]) -> None:
    agent = Agent(Driver(scenario=scenario(Turn(Text("abcdefghij" * 2000, chunk=1)))), blocking_events=True)
    view, done = await run_view(agent)
    assert done.result is not None and view.state.final_text() == done.result.text
    sent = [m for m in view.comm.sent if m["msg_type"] == "comm_msg"]
    assert len(sent) == view.sends
    # 20,000 one-character deltas, read merged a batch at a time: more than one batch, far fewer sends than deltas.
    assert 1 < view.state.events < 20_000
    assert len(sent) < 20_000 / 100
    await agent.close()


class _TwoHalves(StubDriver):
    """One message whose text comes in two halves, the run held after each until the test lets it go on."""

    name = "two-halves"

    def __init__(self) -> None:
        self.halves = [asyncio.Event(), asyncio.Event()]  # set when a half has been emitted
        self.go_on = [asyncio.Event(), asyncio.Event()]

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        for half, letter in enumerate("ЖЩ"):
            for _ in range(100):
                await ctx.emit(TextDelta(text=letter, message_id="m1"))
            self.halves[half].set()
            await self.go_on[half].wait()
        await ctx.turn_end(text="Ж" * 100 + "Щ" * 100)
        return DriverOutcome(text="Ж" * 100 + "Щ" * 100)


async def test_text_that_comes_after_an_update_goes_out_as_an_append(comms: list[CountingComm]) -> None:
    driver = _TwoHalves()
    agent = Agent(driver)
    stream = agent.send("go")
    view = RunView(driver="reference")
    consumer = asyncio.ensure_future(view.consume(stream))

    def carrying(letter: str) -> list[dict[str, Any]]:
        code = json.dumps(letter)[1:-1]  # as the letter reads in a comm message's JSON
        return [m["data"] for m in view.comm.sent if m["msg_type"] == "comm_msg" and code in json.dumps(m["data"])]

    def sent_count(letter: str) -> int:
        code = json.dumps(letter)[1:-1]
        return sum(json.dumps(data).count(code) for data in carrying(letter))

    await driver.halves[0].wait()
    await view.until(lambda v: sent_count("Ж") >= 100)
    driver.go_on[0].set()
    await driver.halves[1].wait()
    await view.until(lambda v: sent_count("Щ") >= 100)
    later = carrying("Щ")
    assert later and all(data["method"] == "custom" and data["content"]["type"] == "append" for data in later)
    driver.go_on[1].set()
    done = await consumer
    assert done.result is not None and view.state.final_text() == done.result.text
    await agent.close()


async def test_flushes_are_never_closer_than_the_rate_allows() -> None:
    from adaptor_nb._views._coalesce import Coalescer

    loop = asyncio.get_running_loop()
    times: list[float] = []
    flushed = asyncio.Event()

    def flush() -> None:
        times.append(loop.time())
        flushed.set()

    c = Coalescer(loop, flush, rate=50)
    for _ in range(12):
        # A burst of marks, then the next burst right after the flush it caused: the spacing is the coalescer's job.
        flushed.clear()
        for _ in range(100):
            c.mark()
        async with asyncio.timeout(5):
            await flushed.wait()
    threading.Thread(target=c.mark).start()
    await c.drain()
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(times) >= 12 and all(g >= c.interval - 1e-6 for g in gaps)


def test_dropped_deltas_are_repaired_from_the_result() -> None:
    state = RunState(driver="reference")
    state.apply(TextDelta(text="Hel", message_id="m"))
    state.apply(Dropped(count=3, by_kind={"TextDelta": 3}))
    state.apply(TextDelta(text="d", message_id="m"))
    state.apply(Done(result=Result(text="Hello world", turns=1)))
    assert state.final_text() == "Hello world"
    assert any(i["kind"] == "notice" and "dropped" in i["text"] for i in state.items)


def test_repr_is_stable() -> None:
    async def make() -> str:
        return repr(RunView(driver="codex", model="gpt-x", thread="review", note=""))

    assert asyncio.run(make()) == "RunView(driver='codex', model='gpt-x', thread='review')"
