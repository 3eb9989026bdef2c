"""The run view in JupyterLab's light and dark themes: screenshots of each, and WCAG AA contrast for every text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from .contrast import measure, too_low
from .lab import CHROMIUM, SCREENSHOTS, Lab, browser_page, clear_outputs, open_notebook, run_all, screenshot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed at /usr/bin/chromium"),
]

SETUP = """
%load_ext adaptor_nb
from adaptor_nb import Agent, ApprovalKind, ApprovalPolicy, Policy
from adaptor_nb.drivers.reference import Driver, Subagent, Text, ThinkingStep, ToolUse, Turn, WaitForMessage, scenario
ask = Policy(approvals=ApprovalPolicy(timeout=300))
agent = Agent(Driver(scenario=scenario(Turn(
    ThinkingStep("Read the README, then list the files."),
    Text("I will list the files first. See [the docs](https://example.org/docs) and `ls`."),
    ToolUse("Read", {"path": "README.md"}, {"output": "# Demo"}),
    ToolUse("Bash", {"command": "ls -la"}, {"output": "README.md\\nsrc"}, approval=ApprovalKind.PERMISSION),
    Subagent("explore tests", summary="found 3 tests"),
    Text("Listed. Waiting for your note."),
    WaitForMessage(),
    Text("Thanks, I will **keep it short**."),
))), policy=ask)
failing = Agent(Driver(scenario=scenario(Turn(
    Text("Trying the build."),
    ToolUse("Bash", {"command": "make"}, {"output": "make: *** [all] Error 2"}, is_error=True),
    ToolUse("Edit", {"file": "Makefile", "diff": "-all:\\n+all: b"}, {"ok": True}, approval=ApprovalKind.PERMISSION),
    Text("never shown"),
))))
"""
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("themes-root")
    home = tmp_path_factory.mktemp("themes-home")
    server = Lab(root, home, {"ADAPTOR_NB_DRIVER": "reference"})
    book = new_notebook(
        cells=[
            new_code_cell(SETUP.strip()),
            new_code_cell("%%agent --agent agent --approvals ask\nList the files"),
            new_code_cell("%%agent --driver reference\nSay hello"),
            new_code_cell("%%agent --agent failing --approvals deny\nFix the build"),  # last: its error stops run-all
        ]
    )
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(book, root / "themes.ipynb")
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def page() -> Iterator[Any]:
    with browser_page() as p:
        yield p


def set_theme(page: Any, theme: str) -> None:
    page.evaluate(f"() => window.jupyterapp.commands.execute('apputils:change-theme', {{theme: {theme!r}}})")
    page.wait_for_function(f"() => document.body.dataset.jpThemeName === {theme!r}")


def assert_readable(page: Any, stage: str) -> int:
    found = measure(page)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    name = stage.replace(",", "").replace(" ", "-")
    (SCREENSHOTS / f"contrast-{name}.json").write_text(json.dumps(found, indent=1))  # every text and its ratio
    low = too_low(found)
    assert not low, f"{stage}: text below WCAG AA 4.5:1:\n" + "\n".join(low)
    return len(found)


@pytest.mark.parametrize("name", list(THEMES))
def test_every_text_reads_at_aa_in_light_and_dark(lab: Lab, page: Any, name: str) -> None:
    open_notebook(page, lab, "themes.ipynb", f"themes-{name}")
    set_theme(page, THEMES[name])
    clear_outputs(page)
    run_all(page)
    views = page.locator(".anb")
    first = views.nth(0)
    first.locator("button.anb-approve").wait_for(state="visible")
    first.locator("textarea.anb-input").fill("Please keep the summary short")
    first.locator("button.anb-send").click()
    first.locator(".anb-msgs .anb-msg").wait_for()
    assert "waiting for approval" in first.locator(".anb-tool").nth(1).inner_text()
    screenshot(first, f"{name}-approval-pending")
    pending = assert_readable(page, f"{name}, approval pending")

    first.locator("button.anb-approve").click()
    first.locator(".anb-state.anb-done").wait_for()
    views.nth(1).locator(".anb-state.anb-done").wait_for()
    views.nth(2).locator(".anb-state.anb-failed").wait_for()
    for summary in page.locator(".anb summary").all():
        summary.click()  # open every fold: thinking, tools, subagent
    assert "delivered while the agent worked" in first.locator(".anb-items .anb-sent").inner_text()
    for i, stage in enumerate(("finished", "offline-note", "denied")):
        screenshot(views.nth(i), f"{name}-{stage}")
    finished = assert_readable(page, f"{name}, finished")
    assert pending > 15 and finished > 40  # the check saw the whole view, not an empty page
