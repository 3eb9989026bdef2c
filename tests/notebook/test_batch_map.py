"""``%%agent --map`` in a real kernel: the template runs per row, the frame lands in --out, bad names fail first,
and the batch view's clicks (approve per row, approve a tool for the rest, retry failed rows) reach the batch."""

from __future__ import annotations

from typing import Any

from .kernel import Kernel

ROWS = """
import sys
sys.path.insert(0, {where!r})
import pandas as pd
from pydantic import BaseModel
from _rows import RowDriver
from adaptor_nb import Agent, ApprovalPolicy, Policy

class Ticket(BaseModel):
    label: str
    priority: int
    urgent: bool

tickets = pd.DataFrame({{"id": [1, 2, 3], "body": {bodies!r}}}, index=["a", "b", "c"])
driver = RowDriver()
agent = Agent(driver, policy=Policy(approvals=ApprovalPolicy(timeout=300)))
"""


def _setup(kernel: Kernel, bodies: list[str]) -> None:
    from pathlib import Path

    where = str(Path(__file__).resolve().parents[1] / "batch")
    kernel.run_ok(ROWS.format(where=where, bodies=bodies))


def batch_views(kernel: Kernel) -> list[tuple[str, dict[str, Any]]]:
    return [(c, s) for c, s in kernel.widgets.items() if "counts" in s and "approvals_pending" in s]


def test_map_runs_the_template_per_row_and_binds_the_frame(kernel: Kernel) -> None:
    _setup(kernel, ["[reply:{'label': 'bug', 'priority': 1, 'urgent': true}]", "plain", "[fail:no]"])
    cell = "%%agent --map tickets --agent agent --schema Ticket --out labels --concurrency 8\nTicket {id}: {body}"
    ex = kernel.run(cell)
    assert ex.status == "ok", ex.text()
    out = kernel.run_ok("print(list(labels['_status']), labels.loc['a', 'label'], sorted(driver.attempts))")
    assert "['ok', 'ok', 'failed'] bug" in out.text()
    assert "'Ticket 2: plain'" in out.text()
    views = batch_views(kernel)
    assert len(views) == 1
    counts = views[0][1]["counts"]
    assert (counts["done"], counts["failed"], counts["finished"]) == (2, 1, 3)
    assert views[0][1]["failures"] == [{"label": "c", "error": "agent_error: no"}]
    assert "labels_batch" in kernel.run_ok("print([n for n in dir() if n.endswith('_batch')])").text()

    # a click on a row opens that row's own run view in the output under the batch view
    assert kernel.run_views() == []
    kernel.send_custom(views[0][0], {"type": "open", "label": "c"})
    _, state = kernel.wait_for(
        lambda: kernel.run_views() and kernel.last_view()[1]["header"].get("note") and kernel.last_view(),
        "the row's run view",
    )
    assert state["header"]["note"] == "row 'c'" and state["header"]["state"] == "failed"
    assert "no" in state["header"]["error"]
    assert kernel.widgets[views[0][0]]["detail"]["label"] == "c"


def test_bad_names_are_usage_errors_before_any_run(kernel: Kernel) -> None:
    _setup(kernel, ["x", "y", "z"])
    kernel.run_ok("number = 3\nclass NotAModel: pass")
    cases = {
        "--map nowhere --agent agent": "no variable named 'nowhere'",
        "--map number --agent agent": "is a int, not a pandas DataFrame",
        "--map tickets --agent agent --schema NotAModel": "--schema NotAModel",
        "--map tickets --agent agent --concurrency 0": "--concurrency: must be at least 1",
        "--agent agent --concurrency 2": "--concurrency only applies with --map",
        "--map tickets --agent agent --spawn": "--spawn cannot be used with --map",
        "--map 'not a name' --agent agent": "--map must name a variable",
    }
    for line, message in cases.items():
        ex = kernel.run(f"%%agent {line} --out labels\n{{body}}")
        assert ex.status == "error" and "UsageError" in ex.text() and message in ex.text(), (line, ex.text())
    assert "True 0" in kernel.run_ok("print('labels' not in dir(), sum(driver.attempts.values()))").text()
    assert batch_views(kernel) == []


def test_approve_per_row_and_approve_all_for_a_tool_from_the_view(kernel: Kernel) -> None:
    _setup(kernel, ["[tool:Write] one", "[tool:Bash] two", "[tool:Bash] three"])
    ex = kernel.start("%%agent --map tickets --agent agent --schema Ticket --out labels --concurrency 2\n{body}")

    def pending() -> Any:
        for comm, state in batch_views(kernel):
            if len(state.get("approvals_pending", [])) == 2:
                return comm, {p["label"]: p for p in state["approvals_pending"]}
        return None

    comm, by_label = kernel.wait_for(pending, "two approvals in the batch view")
    assert by_label["a"]["tool"] == "Write" and by_label["b"]["tool"] == "Bash"
    kernel.send_custom(comm, {"type": "approval", "request_id": by_label["a"]["id"], "action": "approve"})
    kernel.send_custom(comm, {"type": "approval", "request_id": by_label["b"]["id"], "action": "approve_tool"})
    kernel.finish(ex)
    assert ex.status == "ok", ex.text()
    assert "['ok', 'ok', 'ok']" in kernel.run_ok("print(list(labels['_status']))").text()
    assert kernel.widgets[comm]["approvals_pending"] == []


def test_retry_failed_rows_from_the_view_updates_the_bound_frame(kernel: Kernel) -> None:
    _setup(kernel, ["fine", "[transient:2] flaky", "[fail:never] broken"])  # the batch's one retry is not enough
    ex = kernel.run("%%agent --map tickets --agent agent --schema Ticket --out labels\n{body}")
    assert ex.status == "ok", ex.text()
    assert "['ok', 'failed', 'failed']" in kernel.run_ok("print(list(labels['_status']))").text()
    comm, _ = batch_views(kernel)[-1]
    kernel.send_custom(comm, {"type": "retry"})
    kernel.wait_for(
        lambda: kernel.widgets[comm]["counts"]["done"] >= 2 and not kernel.widgets[comm]["busy"], "the retried row"
    )
    text = kernel.run_ok("print(list(labels['_status']), dict(driver.attempts))").text()
    assert "['ok', 'ok', 'failed']" in text
    assert "'fine': 1" in text and "'[transient:2] flaky': 3" in text


def test_interrupt_cancels_the_batch_and_keeps_the_partial_frame(kernel: Kernel) -> None:
    _setup(kernel, ["quick", "[gate] waits", "[gate] waits too"])
    cell = kernel.start("%%agent --map tickets --agent agent --schema Ticket --out labels --concurrency 3\n{body}")
    kernel.wait_for(
        lambda: any(s["counts"].get("done") == 1 and s["counts"].get("running") == 2 for _, s in batch_views(kernel)),
        "one row done and two waiting",
    )
    kernel.interrupt()
    kernel.finish(cell)
    assert cell.status == "error" and cell.reply is not None and cell.reply["ename"] == "KeyboardInterrupt"
    text = kernel.run_ok("print(list(labels['_status']), len(agent.active), driver.live)").text()
    assert "['ok', 'skipped', 'skipped'] 0 0" in text


def test_with_no_front_end_approvals_get_the_policy_fallback_at_once(kernel: Kernel) -> None:
    _setup(kernel, ["[tool:Bash] list", "plain", "plain too"])
    kernel.run_ok("import os; os.environ['ADAPTOR_NB_LIVE_VIEW'] = '0'  # as under nbconvert or nbval")
    # the agent's approval timeout is 300 s: the cell ends long before it, within the kernel helper's wait
    ex = kernel.run("%%agent --map tickets --agent agent --schema Ticket --out labels\n{body}")
    assert ex.status == "ok", ex.text()
    assert ex.text().count("3/3 rows: 2 ok, 0 cached, 1 failed") == 1  # the one static summary
    text = kernel.run_ok("print(list(labels['_status']), labels.loc['a', '_error'])").text()
    assert "['failed', 'ok', 'ok']" in text and "no approver in a headless batch" in text
