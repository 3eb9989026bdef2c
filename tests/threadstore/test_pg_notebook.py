"""``%agent store postgres DSN`` in a real kernel: threads kept on the server across runs, no password anywhere."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from .pg_cluster import PASSWORD, Cluster

pytestmark = pytest.mark.slow


def execute(path: Path, env: dict[str, str]) -> tuple[list[str], str]:
    """Run the notebook headless, save it, and return each code cell's text output and the saved file's text."""
    book = nbformat.read(path, as_version=4)
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        client = NotebookClient(book, timeout=120, kernel_name="python3", allow_errors=True)
        client.resources = {"metadata": {"path": str(path.parent)}}
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    nbformat.write(book, path)
    texts = []
    for cell in book.cells:
        outputs = cell.get("outputs", [])
        parts = [str(o.get("text", "") or o.get("data", {}).get("text/plain", "")) for o in outputs]
        parts += [o.get("evalue", "") for o in outputs if o.get("output_type") == "error"]
        texts.append("".join(parts))
    return texts, path.read_text()


def runs(table: str) -> int:
    header, row = table.strip().splitlines()[:2]
    return int(row.split()[header.split().index("runs") + 1])


def kernel_env(tmp_path: Path, dsn: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "ADAPTOR_NB_DRIVER": "reference",
        "TEAM_DSN": dsn,
    }
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def test_threads_live_on_the_server_and_the_password_nowhere(pg_cluster: Cluster, tmp_path: Path) -> None:
    book = tmp_path / "team.ipynb"
    cells = [
        "import os\ndsn = os.environ['TEAM_DSN']",
        "%load_ext adaptor_nb",
        f"%agent store postgres $dsn nb_{tmp_path.name.lower().replace('-', '_')[:40]}",
        "%%agent --thread review\nlook at it",
        "%agent threads",
        "%agent store",
        "%agent status",
    ]
    nbformat.write(new_notebook(cells=[new_code_cell(s) for s in cells]), book)
    env = kernel_env(tmp_path, pg_cluster.dsn())
    first, _ = execute(book, env)
    second, saved = execute(book, env)
    assert first[2].startswith(
        f"threads are kept on the PostgreSQL server postgresql://adaptor@127.0.0.1:{pg_cluster.port}"
    )
    assert (runs(first[4]), runs(second[4])) == (1, 2), "a headless rerun must continue the thread on the server"
    assert "Postgres('postgresql://adaptor@127.0.0.1" in second[5]
    assert PASSWORD not in saved and PASSWORD not in "".join(first + second)


def test_a_wrong_password_fails_at_the_store_line(pg_cluster: Cluster, tmp_path: Path) -> None:
    book = tmp_path / "bad.ipynb"
    cells = [
        "import os\ndsn = os.environ['TEAM_DSN']",
        "%load_ext adaptor_nb",
        "%agent store postgres $dsn",
    ]
    nbformat.write(new_notebook(cells=[new_code_cell(s) for s in cells]), book)
    texts, saved = execute(book, kernel_env(tmp_path, pg_cluster.dsn(password="Bad-Pass-77")))
    assert "fix the credentials" in texts[2]
    assert "Bad-Pass-77" not in saved
