"""Approvals as AG-UI interrupts over HTTP: the run ends with the interrupt outcome while the CLI run waits, a resume
answers it and the same Stream goes on; unknown or answered ids, a message over an open interrupt, the timeout."""

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from adaptor_nb import Agent, ApprovalKind, ApprovalPolicy, FallbackAction, Policy, QuestionMode
from adaptor_nb.bridges import agui
from adaptor_nb.drivers import reference as ref

from .client import body, history, run
from .frames import findings

TOKEN = "tok"
NO_DEADLINE = Policy(approvals=ApprovalPolicy(timeout=-1))


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as c:
        yield c


def tool_scenario(*extra: Any) -> ref.Scenario:
    step = ref.ToolUse("Bash", {"command": "rm -rf build"}, {"ok": True}, approval=ApprovalKind.PERMISSION, id="tc1")
    return ref.Scenario(ref.Turn(ref.Text("let me clean up"), step, *extra, ref.Text("cleaned")))


async def serving(agent: Agent, policy: Policy = NO_DEADLINE) -> agui.Server:
    return await agui.serve(agui.app(agent, token=TOKEN, key=str, policy=policy))


def interrupts(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    last = events[-1]
    assert last["type"] == "RUN_FINISHED" and last["outcome"]["type"] == "interrupt", last
    return list(last["outcome"]["interrupts"])


async def test_an_approval_ends_the_ag_ui_run_with_an_interrupt_and_a_resume_continues_the_same_stream(
    client: httpx.AsyncClient,
) -> None:
    srv = await serving(Agent(ref.Driver(scenario=tool_scenario())))
    try:
        first = await run(client, srv.url, body("t", ("u1", "clean the build")), TOKEN)
        (intr,) = interrupts(first)
        assert intr["reason"] == "tool_approval" and intr["toolCallId"] == "tc1" and intr["message"]
        assert findings(first) == []
        live = srv.app.bridge.lives["t"]
        assert not live.stream.done  # the CLI run waits for the answer
        resume = {"interruptId": intr["id"], "status": "resolved", "payload": {"approved": True}}
        second = await run(
            client, srv.url, body("t", run_id="r2", resume=[resume]) | {"messages": history(first)}, TOKEN
        )
        assert second[-1]["type"] == "RUN_FINISHED" and second[-1].get("outcome") is None
        assert second[-1]["result"]["runId"] == live.stream.run_id == first[1]["snapshot"]["runId"]
        result = next(e for e in second if e["type"] == "TOOL_CALL_RESULT")
        assert result["toolCallId"] == "tc1" and result["content"] == '{"ok":true}'
        assert "".join(e["delta"] for e in second if e["type"] == "TEXT_MESSAGE_CONTENT") == "cleaned"
        assert findings(second) == []
        resolved = [e for e in second if e["type"] == "CUSTOM" and e["name"] == "adaptor_nb.Notice"]
        assert any(n["value"]["data"].get("by") == "web" for n in resolved)
    finally:
        await srv.stop()


async def test_deny_with_a_reason_and_answering_a_question(client: httpx.AsyncClient) -> None:
    agent = Agent(ref.Driver(scenario=tool_scenario(ref.Ask("Which branch?", ("main", "dev")))))
    srv = await serving(
        agent,
        Policy(approvals=ApprovalPolicy(timeout=-1, on_reject=FallbackAction.CONTINUE, question=QuestionMode.ASK)),
    )
    try:
        first = await run(client, srv.url, body("t", ("u1", "go")), TOKEN)
        (intr,) = interrupts(first)
        live = srv.app.bridge.lives["t"]
        request = live.request(intr["id"])
        deny = {"interruptId": intr["id"], "status": "resolved", "payload": {"approved": False, "reason": "not today"}}
        second = await run(client, srv.url, body("t", run_id="r2", resume=[deny]) | {"messages": history(first)}, TOKEN)
        assert request is not None and request.decision is not None
        assert (request.decision.action, request.decision.reason, request.decision.by) == ("deny", "not today", "web")
        (question,) = interrupts(second)
        assert question["reason"] == "question"
        assert [c["key"] for c in question["metadata"]["choices"]] == ["main", "dev"]
        assert findings(second) == []
        answer = {"interruptId": question["id"], "status": "resolved", "payload": {"answer": "dev"}}
        third = await run(
            client, srv.url, body("t", run_id="r3", resume=[answer]) | {"messages": history(second)}, TOKEN
        )
        assert third[-1]["type"] == "RUN_FINISHED" and findings(third) == []
        asked = live.request(question["id"])
        assert asked is not None and asked.decision is not None and asked.decision.answer == "dev"
    finally:
        await srv.stop()


async def test_unknown_or_answered_ids_and_messages_over_an_open_interrupt_are_refused(
    client: httpx.AsyncClient,
) -> None:
    srv = await serving(Agent(ref.Driver(scenario=tool_scenario())))
    try:
        first = await run(client, srv.url, body("t", ("u1", "go")), TOKEN)
        (intr,) = interrupts(first)
        live = srv.app.bridge.lives["t"]
        request = live.request(intr["id"])
        assert request is not None

        async def resume(*entries: dict[str, Any], run_id: str = "rx") -> list[dict[str, Any]]:
            payload = body("t", run_id=run_id, resume=list(entries)) | {"messages": history(first)}
            return await run(client, srv.url, payload, TOKEN)

        good = {"interruptId": intr["id"], "status": "resolved", "payload": True}
        refused = await resume(good, {"interruptId": "nope", "status": "resolved", "payload": True})
        assert refused[-1]["type"] == "RUN_ERROR" and refused[-1]["code"] == "unknown_interrupt"
        assert "nope" in refused[-1]["message"] and findings(refused) == []
        assert request.state == "pending"  # nothing changed: the good entry beside it was not applied either
        bad = await resume({"interruptId": intr["id"], "status": "resolved", "payload": "maybe"})
        assert bad[-1]["code"] == "invalid_resume_payload" and request.state == "pending"
        talk = await run(client, srv.url, body("t", ("u1", "go"), ("u2", "what now?"), run_id="ry"), TOKEN)
        assert talk[-1]["type"] == "RUN_ERROR" and talk[-1]["code"] == "interrupt_pending"
        assert intr["id"] in talk[-1]["message"] and request.state == "pending"
        done = await resume(good)
        assert done[-1]["type"] == "RUN_FINISHED" and done[-1].get("outcome") is None
        again = await resume(good)
        assert again[-1]["type"] == "RUN_ERROR"
        assert again[-1]["code"] in ("interrupt_answered", "unknown_interrupt")
    finally:
        await srv.stop()


async def test_the_answer_is_refused_once_the_approval_timed_out(client: httpx.AsyncClient) -> None:
    policy = Policy(approvals=ApprovalPolicy(timeout=0.05, on_timeout=FallbackAction.CONTINUE))
    gate = ref.Gate()
    srv = await serving(Agent(ref.Driver(scenario=tool_scenario(gate))), policy=policy)
    try:
        first = await run(client, srv.url, body("t", ("u1", "go")), TOKEN)
        (intr,) = interrupts(first)
        live = srv.app.bridge.lives["t"]
        request = live.request(intr["id"])
        assert request is not None
        await gate.reached.wait()  # the run went on past the unanswered approval: the timeout answered it
        assert request.state == "expired"
        resume = {"interruptId": intr["id"], "status": "resolved", "payload": True}
        late = await run(client, srv.url, body("t", run_id="r2", resume=[resume]), TOKEN)
        assert late[-1]["type"] == "RUN_ERROR" and late[-1]["code"] == "interrupt_answered"
        assert "expired" in late[-1]["message"]
        gate.open()
        await live.wait()
    finally:
        await srv.stop()


async def test_a_cancelled_interrupt_denies_the_request(client: httpx.AsyncClient) -> None:
    srv = await serving(Agent(ref.Driver(scenario=tool_scenario())))
    try:
        first = await run(client, srv.url, body("t", ("u1", "go")), TOKEN)
        (intr,) = interrupts(first)
        request = srv.app.bridge.lives["t"].request(intr["id"])
        cancel = {"interruptId": intr["id"], "status": "cancelled"}
        second = await run(
            client, srv.url, body("t", run_id="r2", resume=[cancel]) | {"messages": history(first)}, TOKEN
        )
        assert second[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR") and findings(second) == []
        assert request is not None and request.decision is not None and request.decision.action == "deny"
    finally:
        await srv.stop()


async def test_stop_with_an_open_interrupt_ends_the_waiting_run() -> None:
    srv = await serving(Agent(ref.Driver(scenario=tool_scenario())))
    async with httpx.AsyncClient(timeout=30) as client:
        first = await run(client, srv.url, body("t", ("u1", "go")), TOKEN)
    interrupts(first)
    live = srv.app.bridge.lives["t"]
    await srv.stop()
    assert live.stream.done
    assert [t for t in asyncio.all_tasks() if t.get_name().startswith("agui-")] == []
