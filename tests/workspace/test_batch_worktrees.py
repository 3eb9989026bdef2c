"""map_rows(..., workspace=GitWorktreeWorkspace(...)): each row runs in its own worktree."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from adaptor_nb import Agent, ConfigError, GitWorktrees, GitWorktreeWorkspace, map_rows
from adaptor_nb.drivers import reference
from adaptor_nb.testing._anthropic import FakeAnthropicServer

from .clis import claude_driver, untracked
from .gitrepo import status, worktrees


async def test_each_row_gets_its_own_worktree(repo: Path) -> None:
    df = pd.DataFrame({"topic": ["x", "y", "z"]}, index=["r1", "r2", "r/3"])
    async with Agent(reference.Driver(), workspace=str(repo), workspace_manager=GitWorktrees()) as agent:
        out = await map_rows(
            agent,
            df,
            "about {topic}",
            workspace=GitWorktreeWorkspace(branch_template="rows/{row}"),
            progress=False,
            concurrency=3,
        )
    assert list(out["_status"]) == ["ok", "ok", "ok"]
    trees = dict((b, p) for p, b in worktrees(repo))
    assert set(trees) == {"main", "rows/r1", "rows/r2", "rows/r-3"}
    assert trees["rows/r1"] == str(repo.parent / "proj.worktrees" / "rows-r1")
    assert status(repo) == []


async def test_a_worktree_spec_without_a_manager_is_refused_before_any_run(repo: Path) -> None:
    df = pd.DataFrame({"topic": ["x"]})
    async with Agent(reference.Driver(), workspace=str(repo)) as agent:
        with pytest.raises(ConfigError) as info:
            map_rows(agent, df, "about {topic}", workspace=GitWorktreeWorkspace(), progress=False)
        with pytest.raises(ConfigError) as bad:
            map_rows(agent, df, "about {topic}", workspace=42, progress=False)  # type: ignore[arg-type]
    assert info.value.option == "workspace" and "workspace_manager" in str(info.value)
    assert bad.value.option == "workspace"
    assert worktrees(repo) == [(str(repo), "main")]


@pytest.mark.claude
async def test_claude_writes_each_rows_file_in_that_rows_worktree(
    repo: Path, home: Path, anthropic: FakeAnthropicServer
) -> None:
    cmd = {"command": "echo {name} > row.txt", "description": "write the row"}
    df = pd.DataFrame({"name": ["ada", "grace"]}, index=["a", "b"])
    async with Agent(claude_driver(anthropic, home), workspace=str(repo), workspace_manager=GitWorktrees()) as agent:
        out = await map_rows(
            agent,
            df,
            f"write [[tool Bash {json.dumps(cmd)}]]",
            workspace=GitWorktreeWorkspace(branch_template="rows/{row}"),
            approve_tools=("Bash",),
            progress=False,
            concurrency=2,
        )
    assert list(out["_status"]) == ["ok", "ok"], list(out["_error"])
    for label, name in (("a", "ada"), ("b", "grace")):
        tree = repo.parent / "proj.worktrees" / f"rows-{label}"
        assert (tree / "row.txt").read_text() == f"{name}\n"
        assert untracked(str(tree)) == ["row.txt"]
    assert status(repo) == [] and not (repo / "row.txt").exists()
