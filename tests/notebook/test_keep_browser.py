"""A notebook run and saved in JupyterLab, reopened without a kernel, shows the finished run without its widget."""

from __future__ import annotations

import json
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
from adaptor_nb import Agent
from adaptor_nb.drivers.reference import Driver, Text, ToolUse, Turn, scenario
agent = Agent(Driver(scenario=scenario(Turn(
    Text("Reading the setup file."),
    ToolUse("Read", {"path": "setup.py"}, {"output": "NAME = 'kept'"}),
    Text("The package is called **kept**."),
))))
"""

SAVED = "() => window.jupyterapp.shell.currentWidget.context.model.dirty === false"


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    server = Lab(root, home, {"ADAPTOR_NB_DRIVER": "reference", "ADAPTOR_NB_THREAD_STORE": str(home / "t.sqlite")})
    try:
        yield server
    finally:
        server.close()


def test_saved_notebook_reopened_shows_the_static_run(lab: Lab) -> None:
    book = new_notebook(
        cells=[new_code_cell(SETUP.strip()), new_code_cell("%%agent --agent agent\nWhat is it called?")]
    )
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(book, lab.root / "keep.ipynb")
    page: Any
    with browser_page() as page:
        open_notebook(page, lab, "keep.ipynb", "keep-run")
        run_all(page)
        page.locator(".anb .anb-state.anb-done").wait_for()
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        page.wait_for_function(SAVED)
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")

    saved = json.loads((lab.root / "keep.ipynb").read_text())
    widget, static_run = saved["cells"][1]["outputs"]  # the live view as JupyterLab showed it, then the static run
    assert "application/vnd.jupyter.widget-view+json" in widget["data"]
    assert "The package is called <strong>kept</strong>." in "".join(static_run["data"]["text/html"])

    saved["metadata"]["kernelspec"] = {"display_name": "gone", "language": "python", "name": "no-such-kernel"}
    (lab.root / "keep.ipynb").write_text(json.dumps(saved))  # reopened with no kernel to run it
    with browser_page() as page:
        page.goto(lab.url("keep.ipynb", "keep-reopen"))
        static = page.locator(".anb-static")
        static.wait_for()
        assert "The package is called kept." in static.inner_text()
        tool = static.locator("details.anb-static-tool")
        assert "Read" in tool.inner_text()
        tool.locator("summary").click()
        assert "NAME = 'kept'" in tool.inner_text()
        assert page.locator(".anb").count() == 0
        screenshot(static, "saved-notebook-reopened")
