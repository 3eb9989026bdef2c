"""The batch progress view on real batches of the row-scripting reference driver: counts, failures, retry,
per-row approvals and one row's run, with clicks delivered as the front end sends them (comm messages)."""

from __future__ import annotations

import asyncio
from typing import Any

import comm
import pandas as pd
import pytest

from adaptor_nb import Agent, ApprovalPolicy, Policy
from adaptor_nb.batch import map_rows
from adaptor_nb.batch._widget import BatchView

from ._rows import RowDriver, Ticket


class RecordingComm(comm.base_comm.BaseComm):  # type: ignore[misc]
    """A comm that keeps what the widget would send to a front end."""

    def __init__(self, **kwargs: Any) -> None:
        self.sent: list[dict[str, Any]] = []
        super().__init__(**kwargs)

    def publish_msg(
        self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None, **keys: Any
    ) -> None:
        self.sent.append({"msg_type": msg_type, "data": data})


@pytest.fixture(autouse=True)
def comms(monkeypatch: pytest.MonkeyPatch) -> list[RecordingComm]:
    made: list[RecordingComm] = []

    def create(**kwargs: Any) -> RecordingComm:
        made.append(RecordingComm(**kwargs))
        return made[-1]

    monkeypatch.setattr(comm, "create_comm", create)
    return made


def click(view: BatchView, **content: Any) -> None:
    """Deliver a front-end message to the view, as the comm does."""
    view._on_custom(view, content, [])


def _frame(prompts: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"body": prompts}, index=[f"t{i}" for i in range(len(prompts))])


def synced_counts(made: list[RecordingComm]) -> list[dict[str, Any]]:
    out = []
    for c in made:
        for m in c.sent:
            state = (m["data"] or {}).get("state", {})
            if "counts" in state:
                out.append(state["counts"])
    return out


async def test_the_view_counts_rows_and_lists_failures_with_their_errors(comms: list[RecordingComm]) -> None:
    df = _frame(["a", "[fail:disk <full>]", "c", "[delay:0.05] d"])
    batch = map_rows(Agent(RowDriver()), df, "{body}", Ticket, concurrency=2, progress="view")
    view = batch.view
    assert isinstance(view, BatchView)
    out = await batch
    assert list(out["_status"]) == ["ok", "failed", "ok", "ok"]
    c = view.counts
    assert (c["done"], c["failed"], c["running"], c["queued"], c["total"]) == (3, 1, 0, 0, 4)
    assert view.failures == [{"label": "t1", "error": "agent_error: disk <full>"}]
    sent = synced_counts(comms)
    assert sent[-1]["finished"] == 4
    finished = [s.get("finished", 0) for s in sent]
    assert finished == sorted(finished) and len(sent) >= 2  # updates went out as rows finished, in order
    bundle = view.static_bundle()
    assert "disk &lt;full&gt;" in bundle["text/html"] and "<full>" not in bundle["text/html"]
    assert "4/4 rows: 3 ok, 0 cached, 1 failed" in bundle["text/plain"]


async def test_the_slowest_live_row_is_the_one_running_longest() -> None:
    driver = RowDriver()
    df = _frame(["[gate] first", "[gate] second"])
    batch = map_rows(Agent(driver), df, "{body}", Ticket, concurrency=2, progress="view")
    view = batch.view
    await view.until(lambda v: v.counts.get("running") == 2)
    slow = view.progress.slowest()
    assert slow is not None and slow[0] == "t0"
    await view.until(lambda v: v.counts.get("slowest") and v.counts["slowest"]["label"] == "t0")
    driver.open_gates()
    await batch
    assert view.counts["slowest"] is None


async def test_retry_failed_rows_reruns_only_the_failed_rows_and_updates_the_frame() -> None:
    driver = RowDriver()
    df = _frame(["fine", "[transient:1] flaky", "[fail:never] broken"])
    batch = map_rows(Agent(driver), df, "{body}", Ticket, retries=0, progress="view")
    first = await batch
    assert list(first["_status"]) == ["ok", "failed", "failed"]
    view = batch.view
    frames: list[pd.DataFrame] = []
    batch.on_frame.append(frames.append)
    click(view, type="retry")
    await view.until(lambda v: not v.busy and v.counts["failed"] == 1 and v.counts["finished"] == 3)
    await asyncio.gather(*view._tasks)
    assert batch.frame is not None and list(batch.frame["_status"]) == ["ok", "ok", "failed"]
    assert frames and frames[-1] is batch.frame
    assert driver.attempts["fine"] == 1  # the ok row did not run again
    assert driver.attempts["[transient:1] flaky"] == 2 and driver.attempts["[fail:never] broken"] == 2
    assert view.failures == [{"label": "t2", "error": "agent_error: never"}]
    assert view.counts["done"] == 2


async def test_a_factory_runner_gets_a_fresh_agent_for_the_retry() -> None:
    made: list[Agent] = []
    driver = RowDriver()  # shared, so it remembers the failed first attempt

    def factory() -> Agent:
        made.append(Agent(driver))
        return made[-1]

    batch = map_rows(factory, _frame(["[transient:1] x"]), "{body}", Ticket, retries=0, progress=False)
    assert list((await batch)["_status"]) == ["failed"]
    again = await batch.retry_failed()
    assert list(again["_status"]) == ["ok"] and driver.attempts["[transient:1] x"] == 2
    assert len(made) == 2 and all(a.closed for a in made)


async def test_each_approval_shows_its_row_and_approve_all_for_a_tool_covers_the_rest() -> None:
    policy = Policy(approvals=ApprovalPolicy(timeout=300))
    agent = Agent(RowDriver(), policy=policy)
    df = _frame(["[tool:Write] one", "[tool:Bash] two", "[tool:Bash] three", "[tool:Bash] four"])
    batch = map_rows(agent, df, "{body}", Ticket, concurrency=2, progress="view")
    view = batch.view
    pending = await view.until(lambda v: len(v.approvals_pending) == 2 and v.approvals_pending)
    by_label = {p["label"]: p for p in pending}
    assert set(by_label) == {"t0", "t1"}
    assert by_label["t0"]["tool"] == "Write" and by_label["t1"]["tool"] == "Bash"
    click(view, type="approval", request_id=by_label["t0"]["id"], action="deny")
    click(view, type="approval", request_id=by_label["t1"]["id"], action="approve_tool")
    out = await batch
    assert list(out["_status"]) == ["failed", "ok", "ok", "ok"]
    assert "denied in the batch view" in out.loc["t0", "_error"]
    assert view.approvals_pending == []
    await agent.close()


async def test_a_click_on_a_stale_request_says_so() -> None:
    batch = map_rows(Agent(RowDriver()), _frame(["a"]), "{body}", Ticket, progress="view")
    await batch
    view = batch.view
    click(view, type="approval", request_id="nope", action="approve")
    await view.until(lambda v: v.notice == "this request is not live any more")


async def test_opening_a_row_shows_its_run() -> None:
    df = _frame(["[reply:{'label': 'printer <b>jam</b>', 'priority': 1, 'urgent': false}]", "[fail:gone]"])
    batch = map_rows(Agent(RowDriver()), df, "{body}", Ticket, progress="view")
    await batch
    view = batch.view
    click(view, type="open", label="t0")
    assert view.detail["label"] == "t0" and "printer" in view.detail["text"]
    click(view, type="open", label="t1")
    assert "gone" in view.detail["text"]


async def test_without_a_view_in_a_script_approvals_are_headless() -> None:
    out = await map_rows(Agent(RowDriver()), _frame(["[tool:Bash] x"]), "{body}", Ticket, progress=False)
    assert "no approver in a headless batch" in out.loc["t0", "_error"]


def test_a_bad_progress_value_is_refused_before_any_run() -> None:
    from adaptor_nb import ConfigError

    driver = RowDriver()
    with pytest.raises(ConfigError) as info:
        map_rows(Agent(driver), _frame(["x"]), "{body}", Ticket, progress="fancy")
    assert info.value.option == "progress" and not driver.attempts


async def test_updates_are_coalesced_like_the_run_views() -> None:
    batch = map_rows(Agent(RowDriver()), _frame(["x"] * 100), "{body} {index}", Ticket, concurrency=8, progress="view")
    changes: list[int] = []
    batch.progress.listeners.append(lambda p: changes.append(p.finished))
    view = batch.view
    await batch
    assert len(changes) == 200  # every admission and every finish
    assert view.counts["finished"] == 100
    assert view.sends < len(changes) / 2  # many changes rode along in one update


class DisplaySlot:
    """Stands in for IPython's DisplayHandle of the output under the batch view: keeps what it was updated with."""

    def __init__(self) -> None:
        self.shown: list[Any] = []

    def update(self, obj: Any) -> None:
        self.shown.append(obj)


async def test_an_opened_running_row_gets_a_run_view_that_follows_it_live() -> None:
    from adaptor_nb.notebook import RunView

    driver = RowDriver()
    batch = map_rows(Agent(driver), _frame(["[gate] slow"]), "{body}", Ticket, progress="view")
    view = batch.view
    view._slot = DisplaySlot()
    await view.until(lambda v: v.counts.get("running") == 1)
    click(view, type="open", label="t0")
    (row_view,) = view._slot.shown
    assert isinstance(row_view, RunView) and row_view.header["note"] == "row 't0'"
    assert row_view.header["state"] != "done"
    driver.open_gates()
    await batch
    await row_view.until(lambda v: v.header["state"] == "done")
    click(view, type="open", label="t0")  # the same row again: the same view
    assert view._slot.shown == [row_view, row_view]


async def test_the_cost_meter_and_a_cost_stop_show_in_the_view() -> None:
    df = _frame([f"[cost:400] row {i}" for i in range(6)])
    batch = map_rows(Agent(RowDriver()), df, "{body}", Ticket, concurrency=1, max_cost_usd=1.0, progress="view")
    out = await batch
    c = batch.view.counts
    assert c["max_cost_usd"] == 1.0 and c["cost_usd"] == pytest.approx(1.2)
    assert (c["done"], c["skipped"]) == (3, 3) and list(out["_status"]).count("skipped") == 3


async def test_the_widget_bundle_carries_the_static_summary_for_saved_notebooks() -> None:
    batch = map_rows(Agent(RowDriver()), _frame(["[fail:<script>x</script>]"]), "{body}", Ticket, progress="view")
    await batch
    bundle = batch.view._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "1/1 rows: 0 ok, 0 cached, 1 failed" in data["text/plain"]
    assert "&lt;script&gt;x&lt;/script&gt;" in data["text/html"] and "<script>" not in data["text/html"]


async def test_the_side_panel_lists_tool_calls_and_approvals_and_closes() -> None:
    batch = map_rows(
        Agent(RowDriver()), _frame(["[tool:Bash] x"]), "{body}", Ticket, progress="view", approve_tools=["Bash"]
    )
    await batch
    view = batch.view
    click(view, type="open", label="t0")
    kinds = [e["kind"] for e in view.detail["entries"]]
    assert "tool" in kinds and "approval" in kinds and kinds[0] == "head"
    assert view.detail["text"] == "\n".join(e["text"] for e in view.detail["entries"])
    click(view, type="close")
    assert view.detail == {}
