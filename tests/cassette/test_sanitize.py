"""The shipped nbval sanitize file makes run-dependent values compare equal, and only those."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from adaptor_nb.cassette import SANITIZE_FILE

from .nbrun import nbval, offline_env

pytestmark = pytest.mark.slow

CODE = (
    "import time, uuid\n"
    "print('run_' + uuid.uuid4().hex[:16], uuid.uuid4())\n"
    "print(time.strftime('%Y-%m-%d %H:%M:%S'), '/tmp/' + uuid.uuid4().hex[:8] + '/notebook.ipynb')\n"
    "print('kept as is')"
)
STORED = (
    "run_0123456789abcdef 5f0c1d0e-0000-4000-8000-000000000001\n"
    "2001-02-03 04:05:06 /home/someone/work/notebook.ipynb\n"
    "kept as is\n"
)


def _book(path: Path, stored: str) -> Path:
    cell = new_code_cell(CODE, outputs=[new_output("stream", name="stdout", text=stored)], execution_count=1)
    nbformat.write(new_notebook(cells=[cell]), path)
    return path


def test_volatile_values_compare_equal_with_the_sanitize_file(tmp_path: Path) -> None:
    book = _book(tmp_path / "v.ipynb", STORED)
    env = offline_env(tmp_path)
    assert nbval(tmp_path, book.name, env=env).returncode != 0  # strict nbval alone sees the differences
    proc = nbval(tmp_path, "--nbval-sanitize-with", SANITIZE_FILE, book.name, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_the_sanitize_file_does_not_hide_a_changed_answer(tmp_path: Path) -> None:
    book = _book(tmp_path / "w.ipynb", STORED.replace("kept as is", "an other answer"))
    proc = nbval(tmp_path, "--nbval-sanitize-with", SANITIZE_FILE, book.name, env=offline_env(tmp_path))
    assert proc.returncode != 0
