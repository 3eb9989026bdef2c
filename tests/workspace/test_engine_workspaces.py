"""Workspaces through Agent and Thread: resolved before launch, released after the run, errors before any
process starts, the worktree in thread compatibility."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaptor_nb import (
    Agent,
    ConfigError,
    DriverManagedWorkspace,
    GitWorktrees,
    GitWorktreeWorkspace,
    Notice,
    RunCancelled,
    SharedWorkspace,
    WorkspaceError,
)
from adaptor_nb.drivers import reference
from adaptor_nb.threadstore import SQLiteStore

from .gitrepo import branches, exists, init_empty, is_dir, status, worktrees


def runtime_notices(events: list[object]) -> list[Notice]:
    return [e for e in events if isinstance(e, Notice) and e.kind == "runtime"]


async def test_a_thread_run_works_in_its_worktree_and_reports_it(repo: Path) -> None:
    manager = GitWorktrees()
    async with Agent(
        reference.Driver(), workspace=str(repo), workspace_spec=GitWorktreeWorkspace(), workspace_manager=manager
    ) as agent:
        stream = agent.thread("review").send("hi")
        events = [e async for e in stream.events()]
        result = await stream.result()
    path = str(repo.parent / "proj.worktrees" / "agent-review")
    assert result.metadata["workspace.path"] == path and result.metadata["workspace.branch"] == "agent/review"
    phases = [n.data["phase"] for n in runtime_notices(events)]
    assert phases == ["workspace_ready", "workspace_released"]
    assert runtime_notices(events)[0].data["path"] == path
    assert next(type(e).__name__ for e in events) == "RunStarted"
    assert (path, "agent/review") in worktrees(repo) and manager.active() == []
    assert status(repo) == []


async def test_without_a_manager_the_spec_leases_the_base_directory_unchanged(repo: Path) -> None:
    async with Agent(reference.Driver(), workspace=str(repo), workspace_spec=GitWorktreeWorkspace()) as agent:
        result = await agent.thread("t").send("hi").result()
    assert "workspace.path" not in result.metadata
    assert worktrees(repo) == [(str(repo), "main")]


async def test_a_call_spec_replaces_the_agent_spec(repo: Path) -> None:
    async with Agent(
        reference.Driver(),
        workspace=str(repo),
        workspace_spec=GitWorktreeWorkspace(),
        workspace_manager=GitWorktrees(),
    ) as agent:
        shared = await agent.send("hi", workspace_spec=SharedWorkspace()).result()
        driver = await agent.send("hi", workspace_spec=DriverManagedWorkspace()).result()
        own = await agent.send("hi", workspace_spec=GitWorktreeWorkspace(branch_template="x/{run}")).result()
    assert "workspace.path" not in shared.metadata and "workspace.path" not in driver.metadata
    assert own.metadata["workspace.branch"] == f"x/{own.run_id}"
    assert len(worktrees(repo)) == 2


@pytest.mark.parametrize("problem", ["dirty", "missing_ref", "collision", "no_commits", "not_git"])
async def test_provisioning_errors_end_the_run_before_launch_naming_the_path(
    problem: str, repo: Path, tmp_path: Path
) -> None:
    base, spec = repo, GitWorktreeWorkspace()
    if problem == "dirty":
        (repo / "README.md").write_text("edited\n")
    elif problem == "missing_ref":
        spec = GitWorktreeWorkspace(base_ref="v9")
    elif problem == "collision":
        (repo.parent / "proj.worktrees" / "agent-t").mkdir(parents=True)
    elif problem == "no_commits":
        base = init_empty(tmp_path / "fresh")
    else:
        base = tmp_path / "plain"
        base.mkdir()
    async with Agent(
        reference.Driver(), workspace=str(base), workspace_spec=spec, workspace_manager=GitWorktrees()
    ) as agent:
        stream = agent.thread("t").send("hi")
        events = [e async for e in stream.events()]
        with pytest.raises(WorkspaceError) as info:
            await stream.result()
    assert [type(e).__name__ for e in events] == ["Done"]  # nothing started
    assert info.value.option == "workspace_spec" and info.value.path in str(info.value)
    assert Path(info.value.path).is_relative_to(tmp_path)


async def test_invalid_workspace_options_fail_naming_the_option(repo: Path) -> None:
    with pytest.raises(ConfigError) as info:
        Agent(reference.Driver(), workspace_manager=object())
    assert info.value.option == "workspace_manager"
    async with Agent(reference.Driver()) as agent:
        with pytest.raises(ConfigError) as spec_error:
            await agent.send("hi", workspace_spec="worktree").result()
    assert spec_error.value.option == "workspace_spec"


async def test_a_thread_continued_by_a_new_agent_reuses_its_worktree(repo: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "threads.db")
    options = dict(workspace=str(repo), workspace_spec=GitWorktreeWorkspace())
    async with Agent(
        reference.Driver(), thread_store=SQLiteStore(db), workspace_manager=GitWorktrees(), **options
    ) as a:
        first = await a.thread("review").send("one").result()
    (Path(first.metadata["workspace.path"]) / "draft.txt").write_text("from the first kernel\n")
    async with Agent(
        reference.Driver(), thread_store=SQLiteStore(db), workspace_manager=GitWorktrees(), **options
    ) as b:
        stream = b.thread("review").send("two")
        events = [e async for e in stream.events()]
        second = await stream.result()
    assert second.metadata["workspace.path"] == first.metadata["workspace.path"]
    ready = runtime_notices(events)[0]
    assert ready.data["created"] is False
    assert not [e for e in events if isinstance(e, Notice) and e.kind == "thread.continuity"]  # resumed, compatible
    assert len(worktrees(repo)) == 2


async def test_a_thread_moved_to_another_workspace_is_not_resumed_there(repo: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "threads.db")
    async with Agent(reference.Driver(), thread_store=SQLiteStore(db), workspace=str(repo)) as a:
        await a.thread("review").send("one").result()
    async with Agent(
        reference.Driver(),
        thread_store=SQLiteStore(db),
        workspace=str(repo),
        workspace_spec=GitWorktreeWorkspace(),
        workspace_manager=GitWorktrees(),
    ) as b:
        stream = b.thread("review").send("two")
        events = [e async for e in stream.events()]
        await stream.result()
    assert [e for e in events if isinstance(e, Notice) and e.kind == "thread.continuity"]


async def test_run_worktrees_can_be_removed_when_the_run_ends(repo: Path) -> None:
    manager = GitWorktrees(remove_run_worktrees=True)
    async with Agent(
        reference.Driver(), workspace=str(repo), workspace_spec=GitWorktreeWorkspace(), workspace_manager=manager
    ) as agent:
        one_off = await agent.send("hi").result()
        threaded = await agent.thread("kept").send("hi").result()
    assert not exists(one_off.metadata["workspace.path"])
    assert f"agent/{one_off.run_id}" not in branches(repo)
    assert is_dir(threaded.metadata["workspace.path"])


async def test_a_second_send_on_a_busy_thread_is_refused_as_busy_and_leaves_the_worktree_alone(repo: Path) -> None:
    from adaptor_nb import ThreadBusyError

    gate = reference.Gate()
    manager = GitWorktrees()
    async with Agent(
        reference.Driver(scenario=reference.Scenario(reference.Turn(gate, "first done"))),
        workspace=str(repo),
        workspace_spec=GitWorktreeWorkspace(),
        workspace_manager=manager,
    ) as agent:
        first = agent.thread("busy").send("one")
        await gate.reached.wait()
        with pytest.raises(ThreadBusyError):
            await agent.thread("busy").send("two").result()
        assert len(manager.active()) == 1  # the first run still holds its worktree
        gate.open()
        result = await first.result()
    assert result.text == "first done" and manager.active() == []
    assert is_dir(result.metadata["workspace.path"])


async def test_cancelling_a_run_releases_its_worktree_lease(repo: Path) -> None:
    gate = reference.Gate()
    manager = GitWorktrees()
    async with Agent(
        reference.Driver(scenario=reference.Scenario(reference.Turn(gate, "never"))),
        workspace=str(repo),
        workspace_spec=GitWorktreeWorkspace(),
        workspace_manager=manager,
    ) as agent:
        stream = agent.thread("c").send("one")
        await gate.reached.wait()
        assert len(manager.active()) == 1
        stream.cancel()
        with pytest.raises(RunCancelled):
            await stream.result()
    assert manager.active() == []
