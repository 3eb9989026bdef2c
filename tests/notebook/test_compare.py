"""``%%agent --driver A,B`` / ``--agent A,B``: the same prompt on each at once, side by side, a comparison table
at the end, and ``--out`` as a mapping by driver."""

from __future__ import annotations

from pathlib import Path

import pytest

from .kernel import Kernel
from .test_credentials import CLI_BIN

AGENTS = """
from pydantic import BaseModel
from adaptor_nb import Agent
from adaptor_nb.drivers.reference import Driver, Structured, Text, ToolUse, Turn, scenario

class Verdict(BaseModel):
    risky: bool
    files: int

careful = Agent(Driver(scenario=scenario(Turn(
    ToolUse("Read", {"path": "a.py"}, {"output": "x = 1"}), Text("One file, nothing risky."),
    Structured({"risky": False, "files": 1}),
))))
quick = Agent(Driver(scenario=scenario(Turn(Text("Looks risky."), Structured({"risky": True, "files": 3})))))
"""


def test_two_agents_run_side_by_side_and_out_maps_each_to_its_result(kernel: Kernel) -> None:
    kernel.run_ok(AGENTS)
    cell = kernel.run("%%agent --agent careful,quick --out both\nReview the diff")
    assert cell.status == "ok", cell.text()
    views = kernel.run_views()
    assert len(views) == 2 and {s["header"]["state"] for _, s in views} == {"done"}
    boxes = [s for s in kernel.widgets.values() if s.get("_model_name") == "HBoxModel"]
    assert len(boxes) == 1 and len(boxes[0]["children"]) == 2, "the two views stand in columns"
    out = kernel.run_ok("print(sorted(both), both['careful'].text, '|', both['quick'].text)").text()
    assert out.strip() == "['careful', 'quick'] One file, nothing risky. | Looks risky."
    table = cell.text()
    assert "driver | status | answer | turns | tool calls" in table
    assert (
        "careful | ok | One file, nothing risky. | 1 | 1 |" in table and "quick | ok | Looks risky. | 1 | 0 |" in table
    )


def test_with_a_schema_the_table_compares_field_by_field(kernel: Kernel) -> None:
    kernel.run_ok(AGENTS)
    cell = kernel.run("%%agent --agent careful,quick --schema Verdict\nReview the diff")
    assert cell.status == "ok", cell.text()
    assert "| risky | files" in cell.text()
    assert "| False | 1" in cell.text() and "| True | 3" in cell.text()
    out = kernel.run_ok("print(type(_agent['quick']).__name__, _agent['quick'].files)").text()
    assert out.strip() == "Verdict 3"


@pytest.mark.skipif(not (CLI_BIN / "codex").exists(), reason="the pinned Codex CLI is not installed")
def test_a_driver_without_credentials_stops_the_cell_before_any_run(spied: tuple[Kernel, Path]) -> None:
    kernel, _ = spied
    cell = kernel.run("%%agent --driver reference,codex\nSay hello")
    assert cell.status == "error" and "the codex driver has no credentials here" in cell.text()
    assert not kernel.run_views(), "no column started"


def test_a_failed_column_raises_unless_no_raise(kernel: Kernel) -> None:
    kernel.run_ok(
        AGENTS + "from adaptor_nb.drivers.reference import Fail\n"
        "broken = Agent(Driver(scenario=scenario(Turn(Text('Trying.'), Fail('provider down')))))"
    )
    cell = kernel.run("%%agent --agent quick,broken\nGo")
    assert cell.status == "error" and cell.reply is not None and cell.reply["evalue"] == "provider down"
    assert any("broken failed" in line for line in cell.reply["traceback"])
    kept = kernel.run("%%agent --agent quick,broken --no-raise\nGo")
    assert kept.status == "ok", kept.text()
    assert "broken: " in kept.text() and "not raised" in kept.text()
    assert "Looks risky." in kernel.run_ok("print(_agent['quick'].text)").text()
