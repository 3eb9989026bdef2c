"""Headless runs compare under nbval every time: fresh threads per run, stable ``%agent threads`` / ``status``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from .nbrun import NOTEBOOKS, nbval, offline_env

pytestmark = pytest.mark.slow


@pytest.mark.timeout(900)
def test_nbval_over_the_shipped_notebooks_passes_twice_in_a_row(tmp_path: Path) -> None:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for path in [*NOTEBOOKS.glob("*.ipynb"), NOTEBOOKS / "replay.jsonl"]:
        shutil.copy(path, folder / path.name)
    env = {**offline_env(tmp_path), "ADAPTOR_NB_DRIVER": "reference"}  # no thread store named: the user's case
    for attempt in (1, 2):
        proc = nbval(tmp_path, "notebooks", env=env)
        assert proc.returncode == 0, f"run {attempt}:\n" + proc.stdout[-4000:] + proc.stderr[-2000:]


def _execute(path: Path, env: dict[str, str]) -> list[str]:
    """Run the notebook headless (as nbconvert does) and return each code cell's text output."""
    book = nbformat.read(path, as_version=4)
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        NotebookClient(
            book, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
        ).execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    texts = []
    for cell in book.cells:
        parts = [str(o.get("text", "") or o.get("data", {}).get("text/plain", "")) for o in cell.outputs]
        texts.append("".join(parts))
    return texts


def _runs(table: str) -> int:
    """The ``runs`` column of the one-row thread table ``%agent threads`` printed."""
    header, row = table.strip().splitlines()[:2]
    return int(row.split()[header.split().index("runs") + 1])


def _notebook(path: Path, *sources: str) -> Path:
    nbformat.write(new_notebook(cells=[new_code_cell(s) for s in sources]), path)
    return path


def test_threads_and_status_print_the_same_on_every_headless_run(tmp_path: Path) -> None:
    env = {**offline_env(tmp_path), "ADAPTOR_NB_DRIVER": "reference"}
    book = _notebook(
        tmp_path / "t.ipynb",
        "%load_ext adaptor_nb",
        "%%agent --thread t\nfirst",
        "%agent threads",
        "%agent status",
    )
    first, second = _execute(book, env), _execute(book, env)
    assert first == second
    assert "last run" not in first[2] and _runs(first[2]) == 1
    assert "thread store: in memory, fresh for this headless run" in first[3]
    assert str(tmp_path) not in first[3] and "/usr/" not in first[3]


def test_a_notebook_that_asks_keeps_its_threads_between_headless_runs(tmp_path: Path) -> None:
    env = {**offline_env(tmp_path), "ADAPTOR_NB_DRIVER": "reference"}
    book = _notebook(
        tmp_path / "k.ipynb",
        "%load_ext adaptor_nb",
        "%agent store keep demo",
        "%%agent --thread t\nagain",
        "%agent threads",
    )
    first, second = _execute(book, env), _execute(book, env)
    assert first[1] == "threads are kept between runs in .adaptor_nb/demo.sqlite\n"
    assert (tmp_path / ".adaptor_nb" / "demo.sqlite").exists()
    assert (_runs(first[3]), _runs(second[3])) == (1, 2)
