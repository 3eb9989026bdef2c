"""The offline demos read as plausible: the scripted driver answers a structured question from the prompt's words,
and the shipped batch notebook labels each ticket as a person would."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import nbformat
from pydantic import BaseModel

from adaptor_nb.drivers.reference import sample

ROOT = Path(__file__).resolve().parents[2]


class Ticket(BaseModel):
    label: Literal["bug", "billing", "question"]
    priority: int
    urgent: bool


def _ask(title: str, body: str) -> object:
    return sample(Ticket.model_json_schema(), prompt=f"Classify this support ticket.\nTitle: {title}\nBody: {body}")


def test_the_scripted_driver_answers_from_the_prompt() -> None:
    assert _ask("Charged twice", "My card shows two charges for May.") == {
        "label": "billing",
        "priority": 1,
        "urgent": True,
    }
    assert _ask("How do I export?", "Is there a CSV export for reports?") == {
        "label": "question",
        "priority": 3,
        "urgent": False,
    }
    assert _ask("App crashes on start", "Since the update the app closes at once.")["label"] == "bug"  # type: ignore[index]
    assert sample(Ticket.model_json_schema()) == {"label": "bug", "priority": 1, "urgent": True}, "no prompt: as before"


def test_the_shipped_batch_notebook_labels_charged_twice_as_billing() -> None:
    book = nbformat.read(ROOT / "notebooks" / "batch_extraction.ipynb", as_version=4)
    cell = next(c for c in book.cells if c.cell_type == "code" and c.source.startswith('labels[["label"'))
    table = cell.outputs[0]["data"]["text/plain"]
    rows = {line.split()[0]: line.split()[1:4] for line in table.splitlines()[2:]}
    assert rows["102"] == ["billing", "1", "True"]
    assert rows["103"] == ["question", "3", "False"]
    assert rows["101"][0] == "bug" and rows["104"][0] == "bug"
