"""The thread store is named for the notebook where the kernel can tell which notebook it runs (real kernels).

A kernel that jupyter_server starts has ``JPY_SESSION_NAME`` (the notebook's path from the server's root) in its
environment, and ipykernel copies it to ``__session__``; VS Code sets ``__vsc_ipynb_file__``; nbclient (so
nbconvert and nbval) sets neither, and there threads start fresh on every run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .nbrun import offline_env
from .test_headless_runs import _execute, _notebook, _runs

pytestmark = pytest.mark.slow

PROBE = (
    'import os\nprint(repr(os.environ.get("JPY_SESSION_NAME")), "__session__" in dir(), "__vsc_ipynb_file__" in dir())'
)


def test_nbclient_tells_the_kernel_no_notebook_so_its_threads_start_fresh(tmp_path: Path) -> None:
    env = {**offline_env(tmp_path), "ADAPTOR_NB_DRIVER": "reference"}
    book = _notebook(tmp_path / "plain.ipynb", PROBE, "%load_ext adaptor_nb", "%agent store")
    probe, _, store = _execute(book, env)
    assert probe == "None False False\n"
    assert "in memory, fresh for this headless run" in store
    kept = _notebook(tmp_path / "kept.ipynb", "%load_ext adaptor_nb", "%agent store keep")
    assert _execute(kept, env)[1] == "threads are kept between runs in .adaptor_nb/threads.sqlite\n"


def test_a_kernel_started_as_jupyter_server_starts_it_names_the_store_after_its_notebook(tmp_path: Path) -> None:
    # jupyter_server's session manager gives the kernel JPY_SESSION_NAME=<path from the server root>
    env = {**offline_env(tmp_path), "ADAPTOR_NB_DRIVER": "reference", "JPY_SESSION_NAME": "work/My Analysis.ipynb"}
    book = _notebook(
        tmp_path / "My Analysis.ipynb",
        PROBE + "\nprint(__session__)",
        "%load_ext adaptor_nb",
        "%agent store keep",
        "%%agent --thread t\nagain",
        "%agent threads",
    )
    first, second = _execute(book, env), _execute(book, env)
    assert first[0] == "'work/My Analysis.ipynb' True False\nwork/My Analysis.ipynb\n"
    assert first[2] == "threads are kept between runs in .adaptor_nb/My-Analysis.sqlite\n"
    assert (tmp_path / ".adaptor_nb" / "My-Analysis.sqlite").exists()
    assert (_runs(first[4]), _runs(second[4])) == (1, 2)


def test_a_kernel_that_vs_code_runs_keeps_its_threads_beside_the_notebook(tmp_path: Path) -> None:
    env = {**offline_env(tmp_path), "ADAPTOR_NB_DRIVER": "reference"}
    path = tmp_path / "vs.ipynb"
    book = _notebook(
        path,
        f"__vsc_ipynb_file__ = {str(path)!r}  # what VS Code's kernel start-up sets",
        "%load_ext adaptor_nb",
        "%%agent --thread t\nonce more",
        "%agent threads",
        "%agent store",
    )
    first, second = _execute(book, env), _execute(book, env)
    assert (_runs(first[3]), _runs(second[3])) == (1, 2)
    assert first[4].strip().endswith(str(Path(".adaptor_nb") / "vs.sqlite"))
    assert (tmp_path / ".adaptor_nb" / "vs.sqlite").exists()
