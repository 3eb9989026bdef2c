"""Kernel-level tests: an %%agent cell blocks while comm messages (what widget clicks send) still reach it."""

from __future__ import annotations

from pathlib import Path

from .kernel import Kernel

APPROVAL_AGENT = """
from adaptor_nb import Agent, ApprovalKind
from adaptor_nb.drivers.reference import Driver, Text, ToolUse, Turn, scenario
agent = Agent(Driver(scenario=scenario(Turn(
    Text("I will list the files."),
    ToolUse("Bash", {"command": "ls"}, {"output": "notes.txt"}, approval=ApprovalKind.PERMISSION),
    Text("The folder holds notes.txt."),
))))
"""

MESSAGE_AGENT = """
from adaptor_nb import Agent
from adaptor_nb.drivers.reference import Driver, Text, Turn, WaitForMessage, scenario
agent = Agent(Driver(scenario=scenario(Turn(Text("Waiting for guidance."), WaitForMessage(), Text("Thanks.")))))
"""

SLOW_AGENT = """
from adaptor_nb import Agent
from adaptor_nb.drivers.reference import Delay, Driver, Text, Turn, scenario
agent = Agent(Driver(scenario=scenario(Turn(Text("Starting a long job."), Delay(600), Text("never")))))
"""


def _items(state: dict, kind: str) -> list[dict]:
    return [i for i in state["items"] if i["kind"] == kind]


def _pending_approval(kernel: Kernel) -> tuple[str, dict] | None:
    for comm, state in kernel.run_views():
        for item in _items(state, "approval"):
            if item["state"] == "pending":
                return comm, item
    return None


def test_approve_click_while_the_cell_blocks_finishes_the_run(kernel: Kernel) -> None:
    kernel.run_ok(APPROVAL_AGENT)
    cell = kernel.start("%%agent --agent agent --approvals ask\nList the files")
    comm, card = kernel.wait_for(lambda: _pending_approval(kernel), "a pending approval card")
    assert card["tool"] == "Bash" and '"ls"' in card["args"]
    assert cell.reply is None, "the cell must still be running while the approval waits"

    kernel.send_custom(comm, {"type": "approval", "id": "c1", "request_id": card["request_id"], "action": "approve"})
    kernel.finish(cell)

    assert cell.status == "ok", cell.text()
    state = kernel.widgets[comm]
    assert state["header"]["state"] == "done"
    (card,) = _items(state, "approval")
    assert card["state"] == "approved"
    (tool,) = _items(state, "tool")
    assert tool["state"] == "done" and tool["result"] == "notes.txt"
    assert kernel.run_ok("print(_agent.text)").text().strip() == "I will list the files. The folder holds notes.txt."


def test_a_second_click_on_the_same_request_is_refused(kernel: Kernel) -> None:
    kernel.run_ok(APPROVAL_AGENT)
    cell = kernel.start("%%agent --agent agent --out res\nList the files")
    comm, card = kernel.wait_for(lambda: _pending_approval(kernel), "a pending approval card")
    click = {"type": "approval", "request_id": card["request_id"]}
    kernel.send_custom(comm, {**click, "id": "c1", "action": "deny", "reason": "not now"})
    kernel.send_custom(comm, {**click, "id": "c2", "action": "approve"})
    kernel.finish(cell)

    assert cell.status == "error"
    assert "ApprovalDenied" in cell.text() and "not now" in cell.text()
    state = kernel.widgets[comm]
    (card,) = _items(state, "approval")
    assert card["state"] == "denied" and "not now" in card["outcome"]
    assert "already answered" in card["error"]
    assert state["header"]["state"] == "failed"
    out = kernel.run_ok("print(type(res).__name__, res.turns)").text().split()
    assert out[0] == "Result"


def test_message_box_send_is_delivered_into_the_running_turn(kernel: Kernel) -> None:
    kernel.run_ok(MESSAGE_AGENT)
    cell = kernel.start("%%agent --agent agent\nWork on it")

    def running_view() -> str | None:
        for comm, state in kernel.run_views():
            if state["accepting"] and _items(state, "text"):
                return comm
        return None

    comm = kernel.wait_for(running_view, "a running view that accepts messages")
    kernel.send_custom(comm, {"type": "message", "id": "m-1", "text": "Prefer small commits", "when": "soon"})
    kernel.finish(cell)

    assert cell.status == "ok", cell.text()
    state = kernel.widgets[comm]
    (message,) = state["messages"]
    assert message["id"] == "m-1" and message["state"] == "delivered" and message["boundary"] == "in_run"
    assert state["accepting"] is False
    outcome = kernel.run_ok("print([(m.id, m.state.name) for m in _agent.messages()])").text()
    assert "('m-1', 'DELIVERED')" in outcome


def test_interrupt_cancels_the_run_and_the_kernel_stays_usable(kernel: Kernel) -> None:
    kernel.run_ok(SLOW_AGENT)
    cell = kernel.start("%%agent --agent agent\nLong job")

    def started() -> str | None:
        for comm, state in kernel.run_views():
            if _items(state, "text"):
                return comm
        return None

    comm = kernel.wait_for(started, "the run to start streaming")
    kernel.interrupt()
    kernel.finish(cell)

    assert cell.status == "error"
    assert cell.reply is not None and cell.reply["ename"] == "KeyboardInterrupt"
    assert kernel.widgets[comm]["header"]["state"] == "interrupted"
    assert kernel.run_ok("print(len(agent.active))").text().strip() == "0"


def test_final_state_stays_in_the_widget(kernel: Kernel) -> None:
    cell = kernel.run("%%agent --driver reference\nSay hello")
    assert cell.status == "ok", cell.text()
    _, state = kernel.last_view()
    assert state["header"]["state"] == "done"
    assert state["header"]["note"] == "offline demo driver: scripted replies"
    assert state["live"] == {}
    (text,) = _items(state, "text")
    assert text["text"].startswith("Scripted reply")
    assert state["footer"]["turns"] == 1
    plain = [o["content"]["data"]["text/plain"] for o in cell.outputs if o["msg_type"] == "display_data"]
    assert plain == ["RunView(driver='reference')  [offline demo driver: scripted replies]"]


def test_streamed_text_arrives_as_appends_and_ends_in_a_full_sync(kernel: Kernel) -> None:
    from .snippets import PACED_AGENT

    kernel.run_ok(PACED_AGENT)
    cell = kernel.run("%%agent --agent agent\nStream")
    assert cell.status == "ok", cell.text()
    comm, state = kernel.last_view()
    expected = "".join(f"w{i} " for i in range(3000))
    (text,) = _items(state, "text")
    assert text["text"] == expected and state["live"] == {}

    rebuilt: dict[str, str] = {}
    appends = 0
    for msg in kernel.iopub_log:
        if msg["msg_type"] != "comm_msg" or msg["content"]["comm_id"] != comm:
            continue
        data = msg["content"]["data"]
        if data.get("method") == "update" and "live" in data["state"]:
            rebuilt = dict(data["state"]["live"])
        elif data.get("method") == "custom" and data["content"].get("type") == "append":
            appends += 1
            for item_id, (offset, piece) in data["content"]["items"].items():
                assert len(rebuilt.get(item_id, "")) == offset
                rebuilt[item_id] = rebuilt.get(item_id, "") + piece
            assert expected.startswith(next(iter(rebuilt.values())))
    assert appends > 0
    assert kernel.comm_messages[comm] < 3000 / 10


def test_line_magics_pin_the_driver_and_report(kernel: Kernel) -> None:
    assert "reference driver with model m2" in kernel.run_ok("%agent use reference --model m2").text()
    cell = kernel.run_ok("%%agent --quiet\nHi")
    assert not [o for o in cell.outputs if o["msg_type"] == "display_data"]
    assert kernel.run_ok("print(_agent.model)").text().strip() == "m2"
    status = kernel.run_ok("%agent status").text()
    assert "default driver: reference (set with %agent use)" in status and "no runs in progress" in status
    assert kernel.run_ok("%agent cancel").text().strip() == "cancelled 0 runs"
    bad = kernel.run("%agent use nothing")
    assert bad.status == "error" and "invalid choice: 'nothing'" in bad.text()


def test_threads_continue_after_a_kernel_restart(kernel: Kernel, tmp_path: Path, notebook_env: dict[str, str]) -> None:
    kernel.run_ok("%%agent --thread plan\nRemember: ship on Friday")
    kernel.shutdown()
    again = Kernel(tmp_path, notebook_env)
    try:
        again.run_ok("%load_ext adaptor_nb")
        again.run_ok("%%agent --thread plan\nWhen do we ship?")
        reply = again.run_ok("print(_agent.text)").text()
        assert "This conversation has 1 earlier prompt" in reply
        table = again.run_ok("%agent threads").text()
        assert "plan" in table and "reference" in table
    finally:
        again.shutdown()
