"""The run view's checklist: one per run, replaced by each plan revision, items as text with status marks, and
the same checklist in the static forms (HTML, markdown) a saved notebook keeps."""

from __future__ import annotations

from typing import Any

import pytest

from adaptor_nb import Agent, PlanItem, PlanUpdate
from adaptor_nb._views._model import RunState
from adaptor_nb.drivers.reference import Driver, Emit, Text, Turn, scenario
from adaptor_nb.notebook import RunView

from .test_view import CountingComm, comms, items  # noqa: F401  (the comm fixture)


def plan(*pairs: tuple[str, str]) -> PlanUpdate:
    return PlanUpdate(items=tuple(PlanItem(t, s) for t, s in pairs), source="test")  # type: ignore[arg-type]


def entries(item: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(e["mark"], e["text"], e["status"]) for e in item["entries"]]


TURN = Turn(
    Emit(plan(("read the csv", "in_progress"), ("plot it", "pending"))),
    Text("reading "),
    Emit(plan(("read the csv", "completed"), ("plot it", "in_progress"))),
    Text("plotting"),
    Emit(plan(("read the csv", "completed"), ("plot it", "completed"))),
)


async def test_one_checklist_ticks_as_the_plan_is_revised() -> None:
    agent = Agent(Driver(scenario=scenario(TURN)))
    events = [e async for e in agent.send("go").events()]
    await agent.close()
    st = RunState(driver="reference")
    seen: list[list[tuple[str, str, str]]] = []
    for event in events:
        st.apply(event)
        if isinstance(event, PlanUpdate):
            (checklist,) = [i for i in st.items if i["kind"] == "plan"]  # one checklist, replaced in place
            seen.append(entries(checklist))
    assert seen == [
        [("◐", "read the csv", "in_progress"), ("☐", "plot it", "pending")],
        [("☑", "read the csv", "completed"), ("◐", "plot it", "in_progress")],
        [("☑", "read the csv", "completed"), ("☑", "plot it", "completed")],
    ]
    assert checklist["revision"] == 3 and checklist["done"] == 2
    assert [i["kind"] for i in st.items] == ["plan", "text", "text"]


async def test_the_widget_state_holds_the_last_revision(comms: list[CountingComm]) -> None:  # noqa: F811
    agent = Agent(Driver(scenario=scenario(TURN)))
    view = RunView(driver="reference")
    done = await view.consume(agent.send("go"))
    await agent.close()
    assert done.err is None
    (checklist,) = items(view, "plan")
    assert entries(checklist) == [("☑", "read the csv", "completed"), ("☑", "plot it", "completed")]
    sent = [m["data"] for c in comms for m in c.sent if m["msg_type"] == "comm_msg"]
    assert any("☑" in str(d) for d in sent)  # what went to the front end carries the ticks


def test_plan_text_stays_text_in_every_form() -> None:
    hostile = "<img src=x onerror=alert(1)> **bold** [link](javascript:x)"
    st = RunState(driver="reference")
    st.apply(plan((hostile, "in_progress"), ("second", "completed")))
    (item,) = [i for i in st.items if i["kind"] == "plan"]
    assert item["entries"][0]["text"] == hostile  # the widget sets it as textContent
    from adaptor_nb._views._static import run_html, run_markdown

    parts = (st.header, st.items, {}, st.messages, st.footer)
    page = run_html(*parts)
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert 'data-status="in_progress">◐ ' in page and 'data-status="completed">☑ second' in page
    assert "1 of 2 done" in page
    md = run_markdown(*parts)
    assert "<img" not in md and "**bold**" not in md and "](javascript" not in md
    assert "- ☑ second" in md


def test_a_second_plan_source_replaces_the_checklist_too() -> None:
    st = RunState(driver="reference")
    st.apply(plan(("a", "pending")))
    st.apply(PlanUpdate(items=(PlanItem("b", "completed"),), revision=2, source="other"))
    (item,) = [i for i in st.items if i["kind"] == "plan"]
    assert entries(item) == [("☑", "b", "completed")] and item["revision"] == 2


@pytest.mark.parametrize("status", ["pending", "in_progress", "completed"])
def test_every_status_has_a_mark(status: str) -> None:
    st = RunState(driver="reference")
    st.apply(plan(("x", status)))
    (item,) = [i for i in st.items if i["kind"] == "plan"]
    assert item["entries"][0]["mark"]
