"""The batch view's result table in real JupyterLab + Chromium: one row per input row with the schema's fields,
a failed row marked with its error on hover, sorting by a header click, opening a row's run from the table."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from .lab import CHROMIUM, Lab, browser_page, open_notebook, run_all, screenshot
from .test_batch_browser import SETUP

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed at /usr/bin/chromium"),
]

MAP = "%%agent --map tickets --agent agent --schema Ticket --out labels --concurrency 4 --approvals auto\n{body}"


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


def test_the_result_table_fills_in_sorts_and_opens_a_row(lab: Lab) -> None:
    book = new_notebook(cells=[new_code_cell(SETUP.strip()), new_code_cell(MAP)])
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(book, lab.root / "table.ipynb")
    page: Any
    with browser_page() as page:
        open_notebook(page, lab, "table.ipynb", "table")
        run_all(page)
        view = page.locator(".anb-batch").first
        grid = view.locator("table.anb-batch-grid")
        grid.locator('tr.anb-batch-row.anb-batch-failed[data-label="t2"]').wait_for()
        page.wait_for_function(
            "() => [...document.querySelectorAll('.anb-batch-grid tr.anb-batch-row')]"
            ".every((tr) => !tr.classList.contains('anb-batch-queued') && !tr.classList.contains('anb-batch-running'))"
        )
        labels = [t.strip() for t in grid.locator("tr.anb-batch-row td:first-child").all_inner_texts()]
        assert labels == ["t0", "t1", "t2", "t3"], "one row per input row, in input order"
        header = grid.locator("th").all_inner_texts()
        assert header[:2] == ["row", "status"] and "label" in header and "cost" in header and "time" in header
        failed = grid.locator('tr.anb-batch-failed[data-label="t2"]')
        assert failed.get_attribute("title") == "agent_error: <b>never</b>", "the error is on hover"
        assert view.locator("b").count() == 0  # agent text stays text
        assert "tokens" in view.locator(".anb-batch-meter").inner_text()
        screenshot(view, "batch-result-table")

        grid.locator("th", has_text="status").click()
        grid.locator("th", has_text="status ▲").wait_for()
        statuses = [t.strip() for t in grid.locator("tr.anb-batch-row td.anb-batch-status").all_inner_texts()]
        assert statuses == sorted(statuses)
        grid.locator("th", has_text="status").click()
        grid.locator("th", has_text="status ▼").wait_for()

        grid.locator("button.anb-batch-row-open", has_text="t2").click()
        view.locator(".anb-batch-dlabel", has_text="run of row t2").wait_for()
        assert "<b>never</b>" in view.locator(".anb-batch-dtext").inner_text()
        assert view.locator("button.anb-batch-stop").is_disabled(), "nothing left to stop"


def test_a_clicked_row_opens_its_run_in_a_side_panel_beside_the_table(lab: Lab) -> None:
    book = new_notebook(cells=[new_code_cell(SETUP.strip()), new_code_cell(MAP)])
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(book, lab.root / "panel.ipynb")
    page: Any
    with browser_page() as page:
        open_notebook(page, lab, "panel.ipynb", "panel")
        run_all(page)
        view = page.locator(".anb-batch").first
        grid = view.locator("table.anb-batch-grid")
        panel = view.locator(".anb-batch-detail")
        view.locator('.anb-batch-count[data-count="queued"][data-value="0"]').wait_for()
        view.locator('.anb-batch-count[data-count="running"][data-value="0"]').wait_for()
        assert not panel.is_visible(), "no panel before a click"

        grid.locator("button.anb-batch-row-open", has_text="t3").click()
        panel.locator(".anb-batch-dlabel", has_text="run of row t3").wait_for()
        # the table scrolls sideways inside its own box when it is wider than its share
        table_box, panel_box = view.locator(".anb-batch-result").bounding_box(), panel.bounding_box()
        assert table_box is not None and panel_box is not None
        assert panel_box["x"] >= table_box["x"] + table_box["width"], "beside the table, not below it"
        assert panel_box["y"] < table_box["y"] + table_box["height"], "level with the table"
        tools = panel.locator(".anb-batch-d-tool").all_inner_texts()
        assert any(t.startswith("[Bash") for t in tools), tools
        approvals = panel.locator(".anb-batch-d-approval").all_inner_texts()
        assert approvals and approvals[0].startswith("[approval]"), approvals
        screenshot(view, "batch-row-side-panel")

        grid.locator("button.anb-batch-row-open", has_text="t2").click()
        panel.locator(".anb-batch-dlabel", has_text="run of row t2").wait_for()
        assert "<b>never</b>" in panel.locator(".anb-batch-d-head").all_inner_texts()[-1]
        assert view.locator("b").count() == 0  # agent text stays text
        panel.locator("button.anb-batch-close").click()
        panel.wait_for(state="hidden")
