"""The batch progress view in real JupyterLab + Chromium: counts, a failed row in the table, approving one row's
request, "retry failed rows" and opening a row's run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from .lab import CHROMIUM, ROOT, Lab, browser_page, open_notebook, run_all, screenshot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed at /usr/bin/chromium"),
]

SETUP = f"""
%load_ext adaptor_nb
import sys
sys.path.insert(0, {str(ROOT / "tests" / "batch")!r})
import pandas as pd
from _rows import RowDriver, Ticket
from adaptor_nb import Agent, ApprovalPolicy, Policy
bodies = ["fine", "[transient:2] flaky", "[fail:<b>never</b>] broken", "[tool:Bash] needs a listing"]
tickets = pd.DataFrame({{"body": bodies}}, index=["t0", "t1", "t2", "t3"])
driver = RowDriver()
agent = Agent(driver, policy=Policy(approvals=ApprovalPolicy(timeout=300)))
"""

MAP = "%%agent --map tickets --agent agent --schema Ticket --out labels --concurrency 4\n{body}"
CHECK = 'print("statuses", list(labels["_status"]))'


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("lab-root")
    home = tmp_path_factory.mktemp("lab-home")
    server = Lab(root, home, {"ADAPTOR_NB_THREAD_STORE": str(home / "threads.adaptor_nb.sqlite")})
    try:
        yield server
    finally:
        server.close()
    assert server.proc.poll() is not None


@pytest.fixture
def page() -> Iterator[Any]:
    with browser_page() as p:
        yield p


def _write(root: Path, name: str, *cells: str) -> str:
    book = new_notebook(cells=[new_code_cell(c.strip()) for c in cells])
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(book, root / name)
    return name


def _count(view: Any, name: str, value: int) -> None:
    view.locator(f'.anb-batch-count[data-count="{name}"][data-value="{value}"]').wait_for()


def test_counts_failures_approval_retry_and_a_rows_run(lab: Lab, page: Any) -> None:
    name = _write(lab.root, "batch.ipynb", SETUP, MAP, CHECK)
    open_notebook(page, lab, name, "batch")
    run_all(page)

    view = page.locator(".anb-batch").first
    approval = view.locator(".anb-batch-approval")
    approval.wait_for(state="visible")
    assert "row t3" in approval.inner_text()
    assert approval.locator("button.anb-approve-tool").inner_text() == "Approve all Bash"
    _count(view, "running", 1)  # the other rows ended; t3 waits for the click
    screenshot(view, "batch-approval-pending")
    approval.locator("button.anb-approve").click()

    _count(view, "done", 2)
    _count(view, "failed", 2)
    _count(view, "queued", 0)
    page.locator(".jp-OutputArea-output", has_text="statuses ['ok', 'failed', 'failed', 'ok']").wait_for()
    table = view.locator(".anb-batch-table")
    assert "agent_error: <b>never</b>" in table.inner_text()
    assert view.locator("b").count() == 0  # agent text stays text
    assert "4/4 rows" in view.locator(".anb-batch-meter").inner_text()
    screenshot(view, "batch-failures")

    retry = view.locator("button.anb-batch-retry")
    page.wait_for_function("() => !document.querySelector('.anb-batch button.anb-batch-retry').disabled")
    retry.click()
    _count(view, "done", 3)
    _count(view, "failed", 1)
    assert "t1" not in table.inner_text() and "t2" in table.inner_text()

    # the retry rebound labels in the kernel: run the check cell again
    page.evaluate(
        "() => { const nb = window.jupyterapp.shell.currentWidget; nb.content.activeCellIndex = 2;"
        " window.jupyterapp.commands.execute('notebook:run-cell'); }"
    )
    page.locator(".jp-OutputArea-output", has_text="statuses ['ok', 'ok', 'failed', 'ok']").wait_for()

    view.locator("button.anb-batch-open", has_text="t2").click()
    detail = view.locator(".anb-batch-dtext")
    detail.wait_for()
    assert "<b>never</b>" in detail.inner_text()
    row_view = page.locator(".anb").first  # the row's own run view, under the batch view
    row_view.locator(".anb-state.anb-failed").wait_for()
    assert "row 't2'" in row_view.locator(".anb-note").inner_text()
    assert "<b>never</b>" in row_view.locator(".anb-failure").inner_text()
    screenshot(row_view, "batch-row-run-view")
    screenshot(view, "batch-after-retry")

    view.locator("input.anb-batch-which").fill("t3")  # any row opens, not only failed ones
    view.locator("button.anb-batch-open-any").click()
    view.locator(".anb-batch-dlabel", has_text="run of row t3").wait_for()
    text = view.locator(".anb-batch-dtext").inner_text()
    assert "[approval]" in text and "[Bash" in text and "done" in text
