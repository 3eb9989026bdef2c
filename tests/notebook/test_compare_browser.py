"""``%%agent --agent A,B`` in real JupyterLab + Chromium: the two runs stand in columns side by side and stream live,
then the comparison table follows them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from _support import require_cli
from nbformat.v4 import new_code_cell, new_notebook

from adaptor_nb.testing._anthropic import FakeAnthropicServer

from .lab import CHROMIUM, Lab, browser_page, open_notebook, run_all, screenshot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed at /usr/bin/chromium"),
]

# Each agent stops at a WaitForMessage after its first words, so both columns are seen live before either ends.
AGENTS = """
%load_ext adaptor_nb
from adaptor_nb import Agent
from adaptor_nb.drivers.reference import Driver, Text, ToolUse, Turn, WaitForMessage, scenario

careful = Agent(Driver(scenario=scenario(Turn(
    ToolUse("Read", {"path": "a.py"}, {"output": "x = 1"}), Text("Reading a.py."),
    WaitForMessage(), Text(" One file, nothing risky."),
))))
quick = Agent(Driver(scenario=scenario(Turn(Text("Skimming."), WaitForMessage(), Text(" Looks risky.")))))
"""


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    server = Lab(root, home, {"ADAPTOR_NB_THREAD_STORE": str(home / "t.sqlite")})
    try:
        yield server
    finally:
        server.close()


def _send(column: Any, text: str) -> None:
    column.locator("select.anb-when").select_option("soon")
    column.locator("textarea.anb-input").fill(text)
    column.locator("button.anb-send").click()


def test_two_columns_stream_live_then_the_comparison_table(lab: Lab) -> None:
    book = new_notebook(cells=[new_code_cell(AGENTS.strip()), new_code_cell("%%agent --agent careful,quick\nReview")])
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(book, lab.root / "compare.ipynb")
    page: Any
    with browser_page() as page:
        open_notebook(page, lab, "compare.ipynb", "compare")
        run_all(page)
        box = page.locator(".widget-hbox").filter(has=page.locator(".anb")).first
        columns = box.locator(".anb")
        left, right = columns.nth(0), columns.nth(1)
        left.get_by_text("Reading a.py.").wait_for()
        right.get_by_text("Skimming.").wait_for()
        assert columns.count() == 2
        assert left.locator(".anb-state.anb-done").count() == 0 and right.locator(".anb-state.anb-done").count() == 0
        assert page.locator("table.anb-compare").count() == 0, "the table comes at the end"
        a, b = left.bounding_box(), right.bounding_box()
        assert a is not None and b is not None
        assert a["x"] + a["width"] <= b["x"] and abs(a["y"] - b["y"]) < 1, "side by side, not stacked"
        screenshot(box, "compare-columns-live")

        _send(left, "go on")
        left.locator(".anb-state.anb-done").wait_for()
        assert right.locator(".anb-state.anb-done").count() == 0, "each column ends on its own"
        _send(right, "go on")
        right.locator(".anb-state.anb-done").wait_for()

        table = page.locator("table.anb-compare")
        table.wait_for()
        header = [h.strip() for h in table.locator("th").all_inner_texts()]
        assert header[:6] == ["driver", "status", "answer", "turns", "tool calls", "time s"]
        rows = [[c.strip() for c in r.locator("td").all_inner_texts()] for r in table.locator("tr").all()[1:]]
        assert [r[:2] for r in rows] == [["careful", "ok"], ["quick", "ok"]]
        assert rows[0][2] == "Reading a.py. One file, nothing risky." and rows[0][4] == "1"
        assert rows[1][2] == "Skimming. Looks risky." and rows[1][4] == "0"
        screenshot(page.locator(".jp-Cell").nth(1), "compare-table")


@pytest.mark.slow
@pytest.mark.claude
def test_the_reference_driver_beside_the_real_claude_cli(tmp_path: Path) -> None:
    """Two different drivers: the reference driver and the real Claude CLI against the fake Anthropic server."""
    cli = require_cli("claude", "run `bash scripts/setup.sh`")
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    book = new_notebook(
        cells=[new_code_cell("%load_ext adaptor_nb"), new_code_cell("%%agent --driver reference,claude\n[[say south]]")]
    )
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(book, root / "two.ipynb")
    with FakeAnthropicServer() as fake:
        env = {
            "PATH": f"{os.path.dirname(cli)}{os.pathsep}{os.environ.get('PATH', '')}",
            "ANTHROPIC_API_KEY": "sk-ant-compare-test-0123456789",
            "ANTHROPIC_BASE_URL": fake.url,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "CLAUDE_CONFIG_DIR": str(home / "claude"),
            "ADAPTOR_NB_THREAD_STORE": str(home / "t.sqlite"),
        }
        lab = Lab(root, home, env)
        try:
            page: Any
            with browser_page() as page:
                open_notebook(page, lab, "two.ipynb", "two")
                run_all(page)
                table = page.locator("table.anb-compare")
                table.wait_for(timeout=120_000)
                box = page.locator(".widget-hbox").filter(has=page.locator(".anb")).first
                columns = box.locator(".anb")
                assert columns.count() == 2
                drivers = [c.locator(".anb-driver").inner_text().strip() for c in columns.all()]
                assert drivers == ["reference", "claude"], drivers
                a, b = columns.nth(0).bounding_box(), columns.nth(1).bounding_box()
                assert a is not None and b is not None and a["x"] + a["width"] <= b["x"], "side by side"
                assert "south" in columns.nth(1).inner_text()
                rows = [[c.strip() for c in r.locator("td").all_inner_texts()] for r in table.locator("tr").all()[1:]]
                assert [r[:2] for r in rows] == [["reference", "ok"], ["claude", "ok"]], rows
                assert "south" in rows[1][2]
                screenshot(page.locator(".jp-Cell").nth(1), "compare-reference-claude")
        finally:
            lab.close()
    assert fake.message_requests, "the Claude CLI reached the fake server"
