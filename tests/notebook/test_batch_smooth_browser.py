"""A 1,000-row ``map_rows`` in real JupyterLab + Chromium stays smooth: the kernel coalesces the batch view's
updates (far fewer comm messages than row changes, and the big result table at most every half second) and the
front end never blocks its main thread for long while the rows stream in."""

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

ROWS = 1000
ROW_CHANGES = 2 * ROWS  # each row goes queued -> running -> finished
TABLE_MESSAGES = 200
"""Messages carrying the result table: it goes at most every half second, so 200 leaves 100 s for the run."""
LONG_TASK_MS = 500
"""The longest main-thread task allowed while the rows stream in: redrawing the 1,000-row table takes tens of
milliseconds; half a second is what a reader would see as the page freezing, with room for a machine under load."""

SETUP = f"""
%load_ext adaptor_nb
import sys
sys.path.insert(0, {str(ROOT / "tests" / "batch")!r})
import pandas as pd
from _rows import RowDriver, Ticket
from adaptor_nb import Agent
tickets = pd.DataFrame({{"body": [f"ticket {{i}}" for i in range({ROWS})]}}, index=[f"r{{i}}" for i in range({ROWS})])
agent = Agent(RowDriver())
"""
MAP = "%%agent --map tickets --agent agent --schema Ticket --out labels --concurrency 16\n{body}"
CHECK = 'print("ok rows", int((labels["_status"] == "ok").sum()))'

# Counts, in the page, the kernel's comm messages to the batch view (found by its module text in the comm_open)
# and the main thread's long tasks. Frames come as text or as the binary v1 protocol, whose JSON parts are UTF-8.
PROBE = """
(() => {
  const probe = { batch: null, messages: 0, table: 0, long: [] };
  window.__anbProbe = probe;
  const decode = (d) => (typeof d === "string" ? d : new TextDecoder().decode(d));
  const Base = window.WebSocket;
  window.WebSocket = class extends Base {
    constructor(...args) {
      super(...args);
      if (!String(args[0]).includes("/channels")) return;
      this.addEventListener("message", (ev) => {
        if (!(typeof ev.data === "string" || ev.data instanceof ArrayBuffer)) return;
        const text = decode(ev.data);
        const id = (text.match(/"comm_id":\\s*"([^"]+)"/) || [])[1];
        if (!id) return;
        if (probe.batch === null && text.includes('"comm_open"') && text.includes("anb-batch-grid")) probe.batch = id;
        else if (id === probe.batch && text.includes('"comm_msg"')) {
          probe.messages += 1;
          if (/"rows":\\s*\\[/.test(text)) probe.table += 1;
        }
      });
    }
  };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) probe.long.push(Math.round(e.duration));
  }).observe({ type: "longtask" });
})();
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


def test_a_thousand_rows_stream_in_coalesced_without_long_tasks(lab: Lab) -> None:
    book = new_notebook(cells=[new_code_cell(c.strip()) for c in (SETUP, MAP, CHECK)])
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(book, lab.root / "smooth.ipynb")
    page: Any
    with browser_page() as page:
        page.add_init_script(PROBE)
        open_notebook(page, lab, "smooth.ipynb", "smooth")
        page.evaluate("() => { window.__anbProbe.long = []; }")  # only what happens while the batch runs
        run_all(page)
        view = page.locator(".anb-batch").first
        page.locator(".jp-OutputArea-output", has_text=f"ok rows {ROWS}").wait_for(timeout=150_000)
        view.locator(f'.anb-batch-count[data-count="done"][data-value="{ROWS}"]').wait_for()
        assert view.locator("tr.anb-batch-row.anb-batch-ok").count() == ROWS
        probe = page.evaluate("() => window.__anbProbe")
        print(f"batch view: {probe['messages']} comm messages, {probe['table']} with the table")
        print(f"long tasks (ms): {probe['long']}")
        assert probe["batch"] is not None, "the batch view's comm was seen"
        assert 0 < probe["table"] <= TABLE_MESSAGES, probe
        assert probe["messages"] < ROW_CHANGES // 2, "coalesced: far fewer messages than row changes"
        assert max(probe["long"], default=0) <= LONG_TASK_MS, probe["long"]
        screenshot(view, "batch-thousand-rows")
