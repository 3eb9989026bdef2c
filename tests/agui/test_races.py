"""An approval answered at once from the web (a resume) and from the notebook's live view (a click on another OS
thread) is resolved exactly once, over 1,000 races; the losing side is told who answered."""

import json
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import comm
import pytest
from ag_ui.core import RunAgentInput

from adaptor_nb import Agent, ApprovalKind, ApprovalPolicy, Event, Notice, Policy
from adaptor_nb.bridges import agui
from adaptor_nb.drivers import reference as ref
from adaptor_nb.notebook import RunView

RACES = 1000


class _Comm(comm.base_comm.BaseComm):  # type: ignore[misc]
    def publish_msg(self, *args: Any, **kwargs: Any) -> None:
        pass


@pytest.fixture(autouse=True)
def quiet_comms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(comm, "create_comm", lambda **kw: _Comm(**kw))


async def collect(bridge: Any, payload: dict[str, Any]) -> list[dict[str, Any]]:
    run = bridge.run(RunAgentInput.model_validate(payload))
    return [json.loads(text) async for batch in run for text in batch]


def next_interrupt(events: list[dict[str, Any]]) -> str | None:
    last = events[-1]
    assert last["type"] == "RUN_FINISHED", last
    outcome = last.get("outcome") or {}
    return outcome["interrupts"][0]["id"] if outcome.get("type") == "interrupt" else None


@pytest.fixture
def fine_switching() -> Iterator[None]:
    """Switch OS threads as often as possible, so the two answers really interleave."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


async def test_a_thousand_races_between_the_web_and_the_notebook_view_resolve_each_approval_once(
    fine_switching: None,
) -> None:
    steps = [
        ref.ToolUse("Edit", {"n": i}, {"ok": i}, approval=ApprovalKind.PERMISSION, id=f"tc{i}") for i in range(RACES)
    ]
    agent = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(*steps, "all done"))))
    view = RunView(driver="reference", thread="t")
    resolved: Counter[str] = Counter()

    def observe(key: str, event: Event) -> None:
        view.apply(event)
        if isinstance(event, Notice) and event.kind == "approval.resolved":
            resolved[str(event.data["request_id"])] += 1

    app = agui.app(agent, token=False, key=str, on_event=observe, policy=Policy(approvals=ApprovalPolicy(timeout=-1)))
    bridge = app.bridge
    start = {"threadId": "t", "runId": "r0", "messages": [{"id": "u1", "role": "user", "content": "edit"}]}
    interrupt = next_interrupt(await collect(bridge, start))
    wins = Counter[str]()
    for i in range(RACES):
        assert interrupt is not None
        go = threading.Barrier(2)

        def click(request_id: str = interrupt, go: threading.Barrier = go) -> None:
            go.wait()
            view.handle_approval({"type": "approval", "request_id": request_id, "action": "approve"})

        clicker = threading.Thread(target=click)
        clicker.start()
        resume = {"threadId": "t", "runId": f"r{i + 1}", "messages": start["messages"]}
        resume["resume"] = [{"interruptId": interrupt, "status": "resolved", "payload": {"approved": True}}]
        go.wait()  # both sides leave the barrier together (the event loop blocks here for a moment)
        events = await collect(bridge, resume)
        clicker.join()
        card = view.state.approval_item(interrupt)
        assert card is not None
        if events[-1]["type"] == "RUN_ERROR":  # the view answered first: the web is told who
            assert events[-1]["code"] == "interrupt_answered" and "approve by human" in events[-1]["message"]
            assert card["error"] == "" and card["state"] == "approved" and card["outcome"] == "approved"
            wins["view"] += 1
            join = {"threadId": "t", "runId": f"j{i + 1}", "messages": start["messages"]}
            events = await collect(bridge, join)  # the client re-attaches to the run, which went on
        else:  # the web answered first: the view shows it
            assert "already answered" in card["error"] and card["outcome"] == "approved by web"
            wins["web"] += 1
        interrupt = next_interrupt(events)
    assert interrupt is None
    live_result = events[-1]["result"]
    assert live_result["text"] == "all done"
    assert len(resolved) == RACES and set(resolved.values()) == {1}  # zero double resolutions
    assert wins["view"] + wins["web"] == RACES and wins["view"] and wins["web"]  # both sides won races
    print(f"races: {RACES}, answered first from the web {wins['web']}, from the view {wins['view']}")
    await app.aclose()
    await agent.close()
