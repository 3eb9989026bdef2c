"""The batch view shows data: a result table with one row per input row (status, the schema's fields, cost, tokens,
time, the error of a failed row), totals with an estimate to finish, a stop button, and the final table kept as
static HTML."""

from __future__ import annotations

from .kernel import Kernel
from .test_batch_map import _setup, batch_views

CELL = "%%agent --map tickets --agent agent --schema Ticket --out labels --concurrency {n}\nTicket {{id}}: {{body}}"


def test_the_table_has_one_row_per_input_row_with_fields_accounting_and_errors(kernel: Kernel) -> None:
    _setup(kernel, ["[reply:{'label': 'bug', 'priority': 1, 'urgent': true}]", "plain", "[fail:no]"])
    ex = kernel.run(CELL.format(n=8))
    assert ex.status == "ok", ex.text()
    (_, state), *_ = batch_views(kernel)
    rows = {r["label"]: r for r in state["rows"]}
    assert list(rows) == ["a", "b", "c"], "input order, one entry per input row"
    assert rows["a"]["status"] == "ok" and rows["a"]["fields"] == {"label": "bug", "priority": 1, "urgent": True}
    assert rows["a"]["input_tokens"] > 0 and "cost_usd" in rows["a"] and rows["a"]["seconds"] >= 0
    assert rows["c"]["status"] == "failed" and rows["c"]["error"] == "agent_error: no" and rows["c"]["fields"] == {}
    assert state["totals"]["remaining"] == 0 and state["totals"]["tokens"] > 0
    shown = [
        m["content"]["data"].get("text/html", "")
        for m in kernel.iopub_log
        if m["msg_type"] in ("display_data", "update_display_data") and "anb-batch-static" in str(m["content"]["data"])
    ]
    static = shown[-1]  # the final form the saved notebook keeps
    assert 'class="anb-batch-rows"' in static and "<th>label</th><th>priority</th><th>urgent</th>" in static
    assert 'title="agent_error: no"' in static, "a failed row's error is on hover in the saved table too"


def test_stop_cancels_the_rest_and_the_table_marks_them_skipped(kernel: Kernel) -> None:
    _setup(kernel, ["[gate]", "[gate]", "[gate]"])
    cell = kernel.start(CELL.format(n=1))

    def running() -> str | None:
        for comm, state in batch_views(kernel):
            if (state.get("counts") or {}).get("running"):
                return comm
        return None

    comm = kernel.wait_for(running, "a running row in the batch view")
    kernel.send_custom(comm, {"type": "stop"})
    kernel.finish(cell)
    assert cell.status == "ok", cell.text()
    rows = {r["label"]: r["status"] for r in kernel.widgets[comm]["rows"]}
    assert rows["b"] == "skipped" and rows["c"] == "skipped"
    assert "stopped in the batch view" in kernel.run_ok("print(labels_batch.cancel_reason)").text()
