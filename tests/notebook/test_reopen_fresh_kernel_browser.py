"""A notebook run and saved in JupyterLab, reopened with a fresh kernel, shows the finished run, not "Loading widget".

The widget's model lived in the first kernel; the new kernel has none, so JupyterLab's widget renderer can never show
that view. The saved cell must show the static run instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbconvert import HTMLExporter
from nbformat.v4 import new_code_cell, new_notebook

from .lab import CHROMIUM, KERNEL_IDLE, Lab, browser_page, open_notebook, run_all, screenshot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed at /usr/bin/chromium"),
]

SETUP = """
%load_ext adaptor_nb
from adaptor_nb import Agent
from adaptor_nb.drivers.reference import Driver, Text, ToolUse, Turn, scenario
agent = Agent(Driver(scenario=scenario(Turn(
    Text("Opening the config."),
    ToolUse("Read", {"path": "app.toml"}, {"output": "name = 'reopened'"}),
    Text("The app is called **reopened**."),
))))
"""

SAVED = "() => window.jupyterapp.shell.currentWidget.context.model.dirty === false"
KERNEL_ID = "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.id"
WIDGET_WORDS = ("Loading widget", "model not found", "Error displaying widget", "RunView(")


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


def test_saved_notebook_reopened_with_a_fresh_kernel_shows_the_run(lab: Lab) -> None:
    book = new_notebook(cells=[new_code_cell(SETUP.strip()), new_code_cell("%%agent --agent agent\nWhat is it?")])
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(book, lab.root / "fresh.ipynb")
    page: Any
    with browser_page() as page:
        open_notebook(page, lab, "fresh.ipynb", "fresh-run")
        first_kernel = page.evaluate(KERNEL_ID)
        run_all(page)
        page.locator(".anb .anb-state.anb-done").wait_for()
        live = page.locator(".jp-Cell").nth(1).locator(".jp-OutputArea")
        assert live.inner_text().count("The app is called reopened.") == 1  # the live widget alone
        assert live.locator(".anb").is_visible()
        assert live.locator(".anb-static").count() == 1
        assert live.locator(".anb-static").is_hidden()
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        page.wait_for_function(SAVED)
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")

    saved = json.loads((lab.root / "fresh.ipynb").read_text())
    widget, static_run = saved["cells"][1]["outputs"]
    assert set(widget["data"]) == {"application/vnd.jupyter.widget-view+json", "text/html", "text/plain"}
    assert "".join(widget["data"]["text/plain"]).startswith("RunView(driver='reference'")  # the stable repr
    assert "reopened" not in json.dumps(widget)  # the widget's output holds no copy of the run
    assert "The app is called <strong>reopened</strong>." in "".join(static_run["data"]["text/html"])
    assert "The app is called **reopened**." in "".join(static_run["data"]["text/markdown"])
    assert "widgets" not in saved["metadata"]  # JupyterLab saved no widget state: the model is gone with its kernel

    exported, _ = HTMLExporter().from_notebook_node(nbformat.reads(json.dumps(saved), as_version=4))
    assert exported.count("The app is called <strong>reopened</strong>.") == 1
    assert "RunView(" not in exported

    with browser_page() as page:
        open_notebook(page, lab, "fresh.ipynb", "fresh-reopen")  # a new kernel starts for the notebook
        assert page.evaluate(KERNEL_ID) != first_kernel
        area = page.locator(".jp-Cell").nth(1).locator(".jp-OutputArea")
        static = area.locator(".anb-static")
        try:
            static.wait_for(state="visible", timeout=30_000)
        finally:
            screenshot(area, "reopen-fresh-kernel")
        shown = area.inner_text()
        for words in WIDGET_WORDS:
            assert words not in shown
        assert "The app is called reopened." in shown
        assert shown.count("The app is called reopened.") == 1
        tool = static.locator("details.anb-static-tool")
        tool.locator("summary").click()
        assert "name = 'reopened'" in tool.inner_text()
        assert area.locator(".anb").count() == 0


def _shows_the_static_run(area: Any) -> None:
    area.locator(".anb-static").wait_for(state="visible", timeout=30_000)
    shown = area.inner_text()
    for words in WIDGET_WORDS:
        assert words not in shown
    assert shown.count("The app is called reopened.") == 1


def test_an_untrusted_copy_reopened_with_a_fresh_kernel_shows_the_run(lab: Lab) -> None:
    book = new_notebook(cells=[new_code_cell(SETUP.strip()), new_code_cell("%%agent --agent agent\nWhat is it?")])
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(book, lab.root / "copy.ipynb")
    page: Any
    with browser_page() as page:
        open_notebook(page, lab, "copy.ipynb", "copy-run")
        run_all(page)
        page.locator(".anb .anb-state.anb-done").wait_for()
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        page.wait_for_function(SAVED)
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")

    saved = json.loads((lab.root / "copy.ipynb").read_text())
    saved["metadata"]["shared_by"] = "a colleague"  # changed outside JupyterLab: its outputs are no longer trusted
    (lab.root / "copy.ipynb").write_text(json.dumps(saved))
    with browser_page() as page:
        open_notebook(page, lab, "copy.ipynb", "copy-reopen")
        area = page.locator(".jp-Cell").nth(1).locator(".jp-OutputArea")
        _shows_the_static_run(area)
        assert area.locator(".anb").count() == 0
        assert page.evaluate("() => window.__pwned") is None


def test_a_restarted_kernel_keeps_the_run_shown_and_a_reload_shows_the_static_run(lab: Lab) -> None:
    book = new_notebook(cells=[new_code_cell(SETUP.strip()), new_code_cell("%%agent --agent agent\nWhat is it?")])
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(book, lab.root / "restart.ipynb")
    page: Any
    with browser_page() as page:
        open_notebook(page, lab, "restart.ipynb", "restart-run")
        first_kernel = page.evaluate(KERNEL_ID)
        run_all(page)
        page.locator(".anb .anb-state.anb-done").wait_for()
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()")
        page.wait_for_function(KERNEL_IDLE)
        assert page.evaluate(KERNEL_ID) == first_kernel  # the same kernel, restarted: its widget models are gone
        area = page.locator(".jp-Cell").nth(1).locator(".jp-OutputArea")
        shown = area.inner_text()  # the view already shown stays, with the finished run it holds
        assert shown.count("The app is called reopened.") == 1
        for words in WIDGET_WORDS:
            assert words not in shown
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        page.wait_for_function(SAVED)
        page.reload()  # the page again, on the restarted kernel, which has no model for the view
        page.wait_for_function(KERNEL_IDLE, timeout=90_000)
        area = page.locator(".jp-Cell").nth(1).locator(".jp-OutputArea")
        _shows_the_static_run(area)
        assert area.locator(".anb").count() == 0
