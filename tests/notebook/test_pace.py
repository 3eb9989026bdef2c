"""People set the pace: approvals wait for their person, failures can be recorded instead of raised, and an
interrupted run leaves its partial Result."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from .kernel import Kernel
from .test_kernel_comms import APPROVAL_AGENT, SLOW_AGENT, _items, _pending_approval


def _card(kernel: Kernel) -> dict:
    _, state = kernel.last_view()
    (card,) = _items(state, "approval")
    return card


def test_with_a_front_end_an_approval_card_has_no_deadline_and_says_it_waits(kernel: Kernel) -> None:
    kernel.run_ok(APPROVAL_AGENT)
    cell = kernel.start("%%agent --agent agent\nList the files")
    comm, card = kernel.wait_for(lambda: _pending_approval(kernel), "a pending approval card")
    assert card["deadline_ms"] == 0
    assert card["wait"] == "waits for your answer (no time limit)"
    kernel.send_custom(comm, {"type": "approval", "id": "c1", "request_id": card["request_id"], "action": "approve"})
    kernel.finish(cell)
    assert cell.status == "ok", cell.text()


def test_approval_timeout_option_sets_a_deadline_and_the_error_is_one_sentence(kernel: Kernel) -> None:
    kernel.run_ok(APPROVAL_AGENT)
    cell = kernel.run("%%agent --agent agent --approval-timeout 0.3\nList the files")
    assert cell.status == "error"
    assert cell.reply is not None and cell.reply["ename"] == "ApprovalTimeout"
    assert "approval_timeout:" not in cell.reply["evalue"] and "approval_timeout" not in cell.text()
    card = _card(kernel)
    assert card["state"] == "expired" and card["deadline_ms"] > 0


def test_config_sets_the_default_approval_timeout(kernel: Kernel) -> None:
    kernel.run_ok(APPROVAL_AGENT)
    said = kernel.run_ok("%agent config --approval-timeout 0.3").text()
    assert "approval timeout: 0.3 s" in said
    cell = kernel.run("%%agent --agent agent\nList the files")
    assert cell.reply is not None and cell.reply["ename"] == "ApprovalTimeout"
    assert "none: every approval waits" in kernel.run_ok("%agent config --approval-timeout none").text()
    bad = kernel.run("%agent config --approval-timeout soon")
    assert bad.status == "error" and "positive number of seconds or none" in bad.text()


def test_a_denial_message_does_not_repeat_its_code(kernel: Kernel) -> None:
    kernel.run_ok(APPROVAL_AGENT)
    cell = kernel.run("%%agent --agent agent --approvals deny\nList the files")
    assert cell.status == "error", cell.text()
    assert cell.reply is not None and cell.reply["ename"] == "ApprovalDenied"
    assert not cell.reply["evalue"].startswith("approval_denied")
    assert "ApprovalDenied: approval_denied" not in cell.text()


def test_no_raise_records_a_denied_run_and_run_all_goes_on(kernel: Kernel) -> None:
    kernel.run_ok(APPROVAL_AGENT)
    cell = kernel.run("%%agent --agent agent --approvals deny --no-raise --out denied\nList the files")
    assert cell.status == "ok", cell.text()
    assert "ApprovalDenied: " in cell.text() and "not raised" in cell.text() and "denied" in cell.text()
    assert kernel.last_view()[1]["header"]["state"] == "failed"
    assert kernel.run_ok("print(type(denied).__name__)").text().strip() == "Result"
    # the default stays raising
    assert kernel.run("%%agent --agent agent --approvals deny\nList the files").status == "error"


def test_config_no_raise_applies_to_every_cell_until_raise(kernel: Kernel) -> None:
    kernel.run_ok(APPROVAL_AGENT)
    assert "Run All goes on" in kernel.run_ok("%agent config --no-raise").text()
    assert kernel.run("%%agent --agent agent --approvals deny\nList the files").status == "ok"
    assert "raise, so Run All stops" in kernel.run_ok("%agent config --raise").text()
    assert kernel.run("%%agent --agent agent --approvals deny\nList the files").status == "error"


def test_after_an_interrupt_out_holds_the_partial_result(kernel: Kernel) -> None:
    kernel.run_ok(SLOW_AGENT)
    cell = kernel.start("%%agent --agent agent --out part\nLong job")

    def started() -> bool:
        return any(_items(state, "text") for _, state in kernel.run_views())

    kernel.wait_for(started, "the run to start streaming")
    kernel.interrupt()
    kernel.finish(cell)
    assert cell.reply is not None and cell.reply["ename"] == "KeyboardInterrupt"
    assert "partial Result is in part" in cell.reply["evalue"]
    out = kernel.run_ok("print(type(part).__name__, repr(part.text))").text()
    assert out.startswith("Result") and "Starting a long job." in out


@pytest.fixture
def headless_env(tmp_path: Path) -> Iterator[None]:
    """Run nbclient the way nbconvert, nbval and papermill do: no Jupyter server session, no live view."""
    env = {
        "ADAPTOR_NB_THREAD_STORE": str(tmp_path / "t.adaptor_nb.sqlite"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "ADAPTOR_NB_LIVE_VIEW": "",
        "JPY_SESSION_NAME": "",
    }
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _execute(tmp_path: Path, cells: list[str]) -> nbformat.NotebookNode:
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(
        book, timeout=120, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    return book


def test_headless_runs_keep_a_bounded_wait_and_the_card_says_so(tmp_path: Path, headless_env: None) -> None:
    probe = (
        "from adaptor_nb.notebook._args import parse_cell_line\n"
        "from adaptor_nb.notebook._runner import session_of\n"
        "plan = await session_of(get_ipython()).plan(parse_cell_line('--driver reference'), globals())\n"
        "print(plan.call.get('policy', 'the default policy: 30 s'))\n"
        "print(plan.approval_note)"
    )
    book = _execute(
        tmp_path,
        [
            "%load_ext adaptor_nb",
            probe,
            APPROVAL_AGENT,
            "%%agent --agent agent --approval-timeout 0.3 --no-raise\nList the files",
            "print('Run All went on')",
        ],
    )
    policy, note = book.cells[1].outputs[0]["text"].splitlines()
    assert policy == "the default policy: 30 s"
    assert note.startswith("headless run (nbconvert, nbval, papermill): nobody can answer here")
    assert "expires after 30 s" in note
    static = next(o for o in book.cells[3].outputs if o.get("data", {}).get("text/html"))
    html = static["data"]["text/html"]
    assert "expired" in html and "nobody can answer here, so this request expires after 0.3 s" in html
    assert book.cells[4].outputs[0]["text"] == "Run All went on\n"
