"""``%%agent --thread KEY --worktree`` in a real kernel whose working directory is a git repository: the thread
runs in its own worktree, the header and ``%agent threads`` show it, ``%agent worktrees`` lists and cleans up."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .kernel import Kernel

IDENTITY = ("-c", "user.name=Test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *IDENTITY, "-C", str(cwd), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "analysis.ipynb").write_text("{}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    (repo / "analysis.ipynb").write_text('{"edited": true}\n')  # the open notebook has uncommitted edits
    return repo


@pytest.fixture
def repo_kernel(repo: Path, notebook_env: dict[str, str]) -> Iterator[Kernel]:
    k = Kernel(repo, notebook_env)
    try:
        k.run_ok("%load_ext adaptor_nb")
        yield k
    finally:
        k.shutdown()
        assert not k.km.is_alive()


def test_a_worktree_thread_runs_in_its_own_worktree_and_shows_it(repo_kernel: Kernel, repo: Path) -> None:
    tree = repo.parent / "proj.worktrees" / "agent-review"
    repo_kernel.run_ok("%%agent --thread review --worktree\nlook at the data")
    _, state = repo_kernel.last_view()
    assert state["header"]["state"] == "done"
    assert state["header"]["workspace"] == str(tree) and state["header"]["branch"] == "agent/review"
    shown = repo_kernel.run_ok("print(_agent.metadata['workspace.path'], _agent.metadata['workspace.branch'])")
    assert shown.text().split() == [str(tree), "agent/review"]
    assert (tree / "analysis.ipynb").read_text() == "{}\n"  # from HEAD; the edits stay in the base tree
    assert (repo / "analysis.ipynb").read_text() == '{"edited": true}\n'
    rows = repo_kernel.run_ok(
        "rows = await get_ipython()._adaptor_nb_session.thread_rows()\nprint(rows[0]['key'], rows[0]['worktree'])"
    )
    assert rows.text().split() == ["review", str(tree), "(agent/review)"]
    assert "worktree" in repo_kernel.run_ok("%agent threads").text()
    listing = repo_kernel.run_ok("%agent worktrees").text()
    assert listing.split() == ["agent/review", str(tree), "idle"]
    # the thread's next cell continues in the same worktree
    repo_kernel.run_ok("%%agent --thread review --worktree\nand again")
    _, again = repo_kernel.last_view()
    assert again["header"]["workspace"] == str(tree)
    assert "removed 1 worktree" in repo_kernel.run_ok("%agent worktrees clean").text()
    assert not tree.exists()
    assert "agent/review" not in git(repo, "branch", "--list")
    assert "no worktrees yet" in repo_kernel.run_ok("%agent worktrees").text()


def test_worktree_with_an_agent_that_has_no_manager_is_refused(repo_kernel: Kernel, repo: Path) -> None:
    repo_kernel.run_ok(
        "from adaptor_nb import Agent\nfrom adaptor_nb.drivers import reference\na = Agent(reference.Driver())"
    )
    ex = repo_kernel.run("%%agent --agent a --worktree\nhi")
    assert ex.status == "error" and "--worktree needs an Agent made with workspace_manager=" in ex.text()
    assert not (repo.parent / "proj.worktrees").exists()


def test_a_new_kernel_continues_the_thread_in_its_worktree(repo: Path, notebook_env: dict[str, str]) -> None:
    tree = repo.parent / "proj.worktrees" / "agent-review"
    first = Kernel(repo, notebook_env)
    try:
        first.run_ok("%load_ext adaptor_nb")
        first.run_ok("%%agent --thread review --worktree\nstart here")
    finally:
        first.shutdown()
    (tree / "draft.md").write_text("notes from the first kernel\n")
    second = Kernel(repo, notebook_env)
    try:
        second.run_ok("%load_ext adaptor_nb")
        second.run_ok("%%agent --thread review --worktree\ngo on")
        _, state = second.last_view()
        items = json.dumps(state.get("items", []))
    finally:
        second.shutdown()
    assert state["header"]["state"] == "done" and state["header"]["workspace"] == str(tree)
    assert "started a fresh session" not in items
    assert (tree / "draft.md").read_text() == "notes from the first kernel\n"
    assert git(repo, "worktree", "list").count("\n") == 2
