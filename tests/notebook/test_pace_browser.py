"""In JupyterLab an approval card waits for its person: no deadline counts down, the card says so, and the
finished view's header and footer give one duration and the static footer's words."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from .lab import CHROMIUM, Lab, browser_page, open_notebook, run_all, screenshot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed at /usr/bin/chromium"),
]

SETUP = """
%load_ext adaptor_nb
from adaptor_nb import Agent, ApprovalKind
from adaptor_nb.drivers.reference import Driver, Text, ToolUse, Turn, scenario
agent = Agent(Driver(scenario=scenario(Turn(
    Text("I will list the files."),
    ToolUse("Bash", {"command": "ls"}, {"output": "notes.txt"}, approval=ApprovalKind.PERMISSION),
    Text("The folder holds notes.txt."),
))))
"""


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    root = tmp_path / "root"
    home = tmp_path / "home"
    root.mkdir()
    home.mkdir()
    server = Lab(root, home, {"ADAPTOR_NB_DRIVER": "reference", "ADAPTOR_NB_THREAD_STORE": str(home / "t.sqlite")})
    try:
        yield server
    finally:
        server.close()


def test_a_card_in_jupyterlab_waits_without_a_deadline(lab: Lab) -> None:
    book = new_notebook(cells=[new_code_cell(SETUP.strip()), new_code_cell("%%agent --agent agent\nList the files")])
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(book, lab.root / "pace.ipynb")
    page: Any
    with browser_page() as page:
        open_notebook(page, lab, "pace.ipynb", "pace")
        run_all(page)
        view = page.locator(".anb").first
        card = view.locator(".anb-approval")
        view.locator("button.anb-approve").wait_for(state="visible")
        assert card.locator("[data-deadline]").count() == 0, "no deadline counts down"
        assert card.locator(".anb-wait").inner_text() == "waits for your answer (no time limit)"
        assert "expires in" not in card.inner_text()
        screenshot(view, "approval-no-time-limit")

        view.locator("button.anb-approve").click()
        view.locator(".anb-state.anb-done").wait_for()
        foot = view.locator(".anb-foot").inner_text()
        assert foot.startswith("done · 1 turn · ") and " out tokens" in foot
        elapsed = view.locator(".anb-elapsed").inner_text()
        assert re.search(r"\d", elapsed) and foot.endswith(f" · {elapsed}"), (elapsed, foot)
