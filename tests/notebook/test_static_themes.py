"""The static form of a run (what a saved notebook and an HTML export show without a kernel) reads at WCAG AA in
the light and the dark theme: a notebook is executed headless, exported by nbconvert with each theme, opened in
Chromium with every fold open, and every text of the static runs is measured against its background."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter
from nbformat.v4 import new_code_cell, new_notebook

from .contrast import measure, too_low
from .lab import CHROMIUM, SCREENSHOTS, browser_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed at /usr/bin/chromium"),
]

SETUP = """
%load_ext adaptor_nb
from adaptor_nb import Agent, ApprovalKind
from adaptor_nb.drivers.reference import Driver, Subagent, Text, ThinkingStep, ToolUse, Turn, scenario
agent = Agent(Driver(scenario=scenario(Turn(
    ThinkingStep("Read the README, then list the files."),
    Text("I will list the files first. See [the docs](https://example.org/docs) and `ls`."),
    ToolUse("Read", {"path": "README.md"}, {"output": "# Demo"}),
    ToolUse("Bash", {"command": "ls -la"}, {"output": "README.md\\nsrc"}, approval=ApprovalKind.PERMISSION),
    Subagent("explore tests", summary="found 3 tests"),
    Text("Done: **two files**."),
))))
failing = Agent(Driver(scenario=scenario(Turn(
    Text("Trying the build."),
    ToolUse("Bash", {"command": "make"}, {"output": "make: *** [all] Error 2"}, is_error=True),
    ToolUse("Edit", {"file": "Makefile"}, {"ok": True}, approval=ApprovalKind.PERMISSION),
    Text("never shown"),
))))
"""


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A notebook with a rich run, an offline-driver note and a denied run, executed headless."""
    cwd = tmp_path_factory.mktemp("static-themes")
    book = new_notebook(
        cells=[
            new_code_cell(SETUP.strip()),
            new_code_cell("%%agent --agent agent --approvals auto\nList the files"),
            new_code_cell("%%agent --driver reference\nSay hello"),
            new_code_cell("%%agent --agent failing --approvals deny\nFix the build"),
        ]
    )
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    keys = ("ADAPTOR_NB_THREAD_STORE", "ADAPTOR_NB_DRIVER")
    old = {k: os.environ.pop(k, None) for k in keys}
    try:
        client = NotebookClient(
            book, timeout=120, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": str(cwd)}}
        )
        client.execute()
    finally:
        for k, v in old.items():
            if v is not None:
                os.environ[k] = v
    yield book


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_exported_static_runs_read_at_aa(executed: Any, theme: str, tmp_path: Path) -> None:
    page_html, _ = HTMLExporter(theme=theme).from_notebook_node(executed)
    assert page_html.count('class="anb-static"') == 3
    path = tmp_path / f"static-{theme}.html"
    path.write_text(page_html)
    with browser_page() as page:
        page.goto(path.as_uri())  # offline: the export's CDN scripts fail to load, as for a reader without a kernel
        page.locator(".anb-static").first.wait_for()
        page.evaluate("() => document.querySelectorAll('.anb-static details').forEach((d) => { d.open = true; })")
        found = measure(page, ".anb-static")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"static-export-{theme}.png"), full_page=True)
    (SCREENSHOTS / f"contrast-static-{theme}.json").write_text(json.dumps(found, indent=1))
    texts = " ".join(f["text"] for f in found)
    for expected in ("List the files first", "ls -la", "explore tests", "Trying the build", "Scripted reply"):
        assert expected.lower() in texts.lower(), f"{expected!r} is not visible in the {theme} export"
    low = too_low(found)
    assert not low, f"{theme}: static text below WCAG AA 4.5:1:\n" + "\n".join(low)
