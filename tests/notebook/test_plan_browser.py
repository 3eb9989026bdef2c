"""Browser test: the run view's checklist ticks in JupyterLab as the agent revises its plan."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from .lab import CHROMIUM, Lab, browser_page, open_notebook, run_all, screenshot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed at /usr/bin/chromium"),
]

HOSTILE = "<img src=x onerror=\"window.__pwned='plan'\"> **plot** it"

PLANNING_AGENT = f"""
%load_ext adaptor_nb
from adaptor_nb import Agent, PlanItem, PlanUpdate
from adaptor_nb.drivers.reference import Driver, Emit, Text, Turn, WaitForMessage, scenario

def plan(*statuses):
    steps = ("read the csv", {HOSTILE!r})
    return PlanUpdate(items=tuple(PlanItem(t, s) for t, s in zip(steps, statuses)), source="demo")

# Each message is waited for, then taken in (claimed) before the next step: the second WaitForMessage of a pair
# consumes that delivery, so the next revision waits for the next message.
agent = Agent(Driver(scenario=scenario(Turn(
    Emit(plan("in_progress", "pending")),
    Text("Reading the data."),
    WaitForMessage(), WaitForMessage(),
    Emit(plan("completed", "in_progress")),
    WaitForMessage(), WaitForMessage(),
    Emit(plan("completed", "completed")),
    Text(" All done."),
))))
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("lab-root")
    home = tmp_path_factory.mktemp("lab-home")
    server = Lab(root, home, {"ADAPTOR_NB_DRIVER": "reference"})
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def page() -> Iterator[Any]:
    with browser_page() as p:
        yield p


def _send(page: Any, view: Any, text: str) -> None:
    page.wait_for_function("() => !document.querySelector('.anb textarea.anb-input').disabled")
    view.locator("select.anb-when").select_option("soon")
    view.locator("textarea.anb-input").fill(text)
    view.locator("button.anb-send").click()


def test_the_checklist_ticks_as_the_agent_works(lab: Lab, page: Any) -> None:
    book = new_notebook(cells=[new_code_cell(PLANNING_AGENT.strip()), new_code_cell("%%agent --agent agent\nPlan it")])
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(book, lab.root / "plan.ipynb")
    open_notebook(page, lab, "plan.ipynb", "plan")
    run_all(page)
    view = page.locator(".anb").first
    steps = view.locator(".anb-plan li")

    view.locator('.anb-plan li[data-status="in_progress"]').first.wait_for()
    assert [s.get_attribute("data-status") for s in steps.all()] == ["in_progress", "pending"]
    assert steps.nth(0).inner_text().startswith("◐") and steps.nth(1).inner_text().startswith("☐")
    assert "0 of 2 done" in view.locator(".anb-plan").inner_text()
    screenshot(view, "plan-first-revision")

    _send(page, view, "go on")
    view.locator('.anb-plan li[data-status="completed"]').first.wait_for()
    assert [s.get_attribute("data-status") for s in steps.all()] == ["completed", "in_progress"]
    assert steps.nth(0).inner_text().startswith("☑")

    _send(page, view, "finish")
    view.locator(".anb-state.anb-done").wait_for()
    assert [s.get_attribute("data-status") for s in steps.all()] == ["completed", "completed"]
    assert view.locator(".anb-plan").count() == 1  # one checklist, replaced by each revision
    assert "2 of 2 done" in view.locator(".anb-plan").inner_text()
    assert HOSTILE in steps.nth(1).inner_text()  # shown as text
    assert view.locator(".anb-plan img").count() == 0 and view.locator(".anb-plan strong").count() == 0
    assert page.evaluate("() => window.__pwned === undefined")
    screenshot(view, "plan-done")
