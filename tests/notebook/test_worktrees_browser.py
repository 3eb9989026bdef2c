"""The worktree of a ``%%agent --thread KEY --worktree`` cell in the run view's header, in JupyterLab."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from .lab import CHROMIUM, Lab, browser_page, open_notebook, run_all, screenshot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed at /usr/bin/chromium"),
]

IDENTITY = ("-c", "user.name=Test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *IDENTITY, "-C", str(cwd), *args], capture_output=True, check=True)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    root = tmp_path / "proj"
    root.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    book = new_notebook(
        cells=[new_code_cell("%load_ext adaptor_nb"), new_code_cell("%%agent --thread review --worktree\nhi")]
    )
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(book, root / "review.ipynb")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    server = Lab(
        root,
        home,
        {"ADAPTOR_NB_DRIVER": "reference", "ADAPTOR_NB_THREAD_STORE": str(home / "threads.adaptor_nb.sqlite")},
    )
    try:
        yield server
    finally:
        server.close()
    assert server.proc.poll() is not None


@pytest.fixture
def page() -> Iterator[Any]:
    with browser_page() as p:
        yield p


def test_the_header_shows_the_worktree_and_its_branch(lab: Lab, page: Any, tmp_path: Path) -> None:
    open_notebook(page, lab, "review.ipynb", "review")
    run_all(page)
    page.wait_for_function(
        "() => (document.querySelector('.anb .anb-workspace') || {}).innerText?.includes('agent/review')"
    )
    header = page.locator(".anb .anb-workspace").first.inner_text()
    assert header == f"worktree {tmp_path / 'proj.worktrees' / 'agent-review'} (branch agent/review)"
    screenshot(page.locator(".anb").first, "worktree-header")
