"""Threads survive kernel restarts everywhere: one rule finds the store in JupyterLab, VS Code, nbclient, nbconvert,
papermill and plain IPython, and a thread that starts fresh says so in the view."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from adaptor_nb.notebook._where import RUN_STORES, locate

HEADLESS = {
    "ADAPTOR_NB_DRIVER": "reference",
    "ADAPTOR_NB_THREAD_STORE": "",
    "ADAPTOR_NB_LIVE_VIEW": "",
    "JPY_SESSION_NAME": "",
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",
}


@pytest.fixture
def headless_env() -> Iterator[None]:
    """The environment of a headless runner (nbconvert, nbclient, papermill): no server session, no store named."""
    old = {k: os.environ.get(k) for k in HEADLESS}
    os.environ.update(HEADLESS)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _book(*cells: str) -> nbformat.NotebookNode:
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    book.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    return book


def _plain(cell: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in cell.outputs)


def _html(cell: nbformat.NotebookNode) -> str:
    return "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs)


def test_one_rule_for_every_front_end(tmp_path: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    lab = locate(env={"JPY_SESSION_NAME": str(folder / "review.ipynb")}, shell=None, cwd=tmp_path)
    assert lab.path == folder / ".adaptor_nb" / "review.sqlite" and lab.how == "notebook"
    vscode = SimpleNamespace(user_ns={"__vsc_ipynb_file__": str(folder / "review.ipynb")})
    assert locate(env={}, shell=vscode, cwd=tmp_path).path == lab.path
    terminal = locate(env={}, shell=SimpleNamespace(user_ns={}), cwd=tmp_path)
    assert terminal.path == tmp_path / ".adaptor_nb" / "threads.sqlite" and terminal.how == "folder"
    kernel = SimpleNamespace(user_ns={}, kernel=SimpleNamespace(session=SimpleNamespace(key=b"k1")))
    run = locate(env={}, shell=kernel, cwd=tmp_path)
    assert run.how == "run" and run.path.parent.parent.name == RUN_STORES
    assert locate(env={}, shell=kernel, cwd=tmp_path).path == run.path, "a restarted kernel keeps its key"
    other = SimpleNamespace(user_ns={}, kernel=SimpleNamespace(session=SimpleNamespace(key=b"k2")))
    assert locate(env={}, shell=other, cwd=tmp_path).path != run.path, "a new run gets a new store"
    explicit = locate(env={"ADAPTOR_NB_THREAD_STORE": "/x/y.db"}, shell=kernel, cwd=tmp_path)
    assert explicit.path == Path("/x/y.db")
    kept = locate(tmp_path / ".adaptor_nb" / "mine.sqlite", env={}, shell=kernel, cwd=tmp_path)
    assert kept.how == "kept" and kept.path.name == "mine.sqlite"


def test_nbclient_continues_a_thread_after_a_kernel_restart(tmp_path: Path, headless_env: None) -> None:
    from jupyter_core.utils import run_sync

    book = _book(
        "%load_ext adaptor_nb",
        "%%agent --thread plan\nRemember: ship on Friday",
        "%load_ext adaptor_nb",
        "%%agent --thread plan\nWhen do we ship?",
        "print(_agent.text)",
        "%agent status",
    )
    client = NotebookClient(book, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    with client.setup_kernel():
        client.execute_cell(book.cells[0], 0)
        client.execute_cell(book.cells[1], 1)
        assert client.km is not None and client.kc is not None
        run_sync(client.km.restart_kernel)(now=True)
        run_sync(client.kc.wait_for_ready)(timeout=60)
        for index in range(2, 6):
            client.execute_cell(book.cells[index], index)
    assert "new thread &#x27;plan&#x27;: its thread store has no earlier run of it" in _html(book.cells[1])
    assert "new thread" not in _html(book.cells[3]), "the restarted kernel found the thread: no fresh start"
    assert "This conversation has 1 earlier prompt" in _plain(book.cells[4])
    assert "in memory, fresh for this headless run (a restarted kernel of the run finds it again" in _plain(
        book.cells[5]
    )
    assert not list(tmp_path.glob(".adaptor_nb*")), "a headless run leaves nothing beside the notebook"


def _papermill(papermill: Any, source: Path, target: Path) -> None:
    papermill.execute_notebook(
        str(source), str(target), cwd=str(source.parent), progress_bar=False, kernel_name="python3"
    )


def test_papermill_runs_start_fresh_and_say_so(tmp_path: Path, headless_env: None) -> None:
    papermill = pytest.importorskip("papermill")
    source = tmp_path / "plan.ipynb"
    nbformat.write(
        _book("%load_ext adaptor_nb", "%%agent --thread plan\nRemember", "%%agent --thread plan\nAgain"), source
    )
    outputs = []
    for attempt in range(2):
        target = tmp_path / f"out{attempt}.ipynb"
        papermill.execute_notebook(
            str(source), str(target), cwd=str(tmp_path), progress_bar=False, kernel_name="python3"
        )
        book = nbformat.read(target, as_version=4)
        assert "new thread" in _html(book.cells[1]) and "new thread" not in _html(book.cells[2])
        outputs.append([_html(c) for c in book.cells])
    assert outputs[0] == outputs[1], "each papermill run starts its threads fresh, so two runs give the same outputs"


def test_papermill_keeps_threads_between_runs_when_asked(tmp_path: Path, headless_env: None) -> None:
    papermill = pytest.importorskip("papermill")
    source = tmp_path / "keep.ipynb"
    nbformat.write(_book("%load_ext adaptor_nb", "%agent store keep", "%%agent --thread plan\nHi"), source)
    for attempt in range(2):
        target = tmp_path / f"out{attempt}.ipynb"
        papermill.execute_notebook(
            str(source), str(target), cwd=str(tmp_path), progress_bar=False, kernel_name="python3"
        )
    first, second = (nbformat.read(tmp_path / f"out{i}.ipynb", as_version=4) for i in range(2))
    assert "new thread" in _html(first.cells[2])
    assert "new thread" not in _html(second.cells[2]) and "1 earlier prompt" in _html(second.cells[2])


def test_a_new_thread_in_a_notebook_store_is_an_info_notice(tmp_path: Path) -> None:
    from adaptor_nb.notebook._args import parse_cell_line
    from adaptor_nb.notebook._session import NotebookSession

    async def main() -> tuple[str, str]:
        os.environ["ADAPTOR_NB_THREAD_STORE"] = str(tmp_path / "t.sqlite")
        try:
            session = NotebookSession()
            plan = await session.plan(parse_cell_line("--driver reference --thread t"), {})
            notice = await session.new_thread_notice(plan)
            await session.aclose()
        finally:
            os.environ.pop("ADAPTOR_NB_THREAD_STORE", None)
        assert notice is not None
        return str(notice.kind), notice.text

    kind, text = asyncio.run(main())
    assert kind == "lifecycle"
    assert text == "new thread 't': its thread store has no earlier run of it, so it starts here (see %agent status)"
