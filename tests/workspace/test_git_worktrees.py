"""GitWorktrees on the real git binary: creation, reuse, names, release modes and the errors before launch."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaptor_nb import (
    GitWorktrees,
    GitWorktreeWorkspace,
    SharedWorkspace,
    WorkspaceError,
    WorkspaceReleaseMode,
    WorkspaceRequest,
)
from adaptor_nb.workspace import PassthroughWorkspaces

from .gitrepo import branches, exists, git, is_dir, make_repo, status, worktrees

KEEP, STOP = WorkspaceReleaseMode.KEEP, WorkspaceReleaseMode.STOP


def request(
    base: Path, spec: object = None, *, thread: str = "", run: str = "run_1", row: str = ""
) -> WorkspaceRequest:
    return WorkspaceRequest(
        base_cwd=str(base),
        spec=spec if spec is not None else GitWorktreeWorkspace(),  # type: ignore[arg-type]
        run_id=run,
        thread_key=thread,
        metadata={"row": row} if row else {},
    )


async def test_a_thread_gets_a_worktree_beside_the_repository_on_its_own_branch(repo: Path) -> None:
    manager = GitWorktrees()
    lease = await manager.resolve(request(repo, thread="review"))
    path = Path(lease.path)
    assert path == repo.parent / "proj.worktrees" / "agent-review"
    assert lease.kind == "worktree" and lease.branch == "agent/review" and lease.created
    assert lease.repository == str(repo) and lease.base_commit == git(repo, "rev-parse", "HEAD").strip()
    assert (path / "src" / "app.py").read_text() == "print('hi')\n"
    assert (str(path), "agent/review") in worktrees(repo)
    assert not str(path).startswith(str(repo) + "/")
    assert status(repo) == []  # the base tree is untouched
    await manager.release(lease, KEEP)
    assert is_dir(path) and "agent/review" in branches(repo)


async def test_resolving_the_thread_again_reuses_its_worktree_even_from_a_new_manager(repo: Path) -> None:
    first = await GitWorktrees().resolve(request(repo, thread="review"))
    (Path(first.path) / "notes.txt").write_text("work in progress\n")
    await GitWorktrees().release(first, KEEP)
    again = await GitWorktrees().resolve(request(repo, thread="review", run="run_2"))
    assert again.path == first.path and not again.created
    assert again.base_commit == first.base_commit
    assert (Path(again.path) / "notes.txt").read_text() == "work in progress\n"
    assert len(worktrees(repo)) == 2


async def test_branch_names_are_made_from_the_template_and_sanitized(repo: Path) -> None:
    manager = GitWorktrees()
    spec = GitWorktreeWorkspace(branch_template="exp/{thread}/{run}")
    lease = await manager.resolve(request(repo, spec, thread="my thread: v1..2?", run="run_9"))
    assert lease.branch == "exp/my-thread-v1.2/run_9"
    git(repo, "check-ref-format", "--branch", lease.branch)
    row = await manager.resolve(request(repo, GitWorktreeWorkspace(branch_template="rows/{row}"), row="row 7/a"))
    assert row.branch == "rows/row-7-a"
    one_off = await manager.resolve(request(repo, run="run_abc"))
    assert one_off.branch == "agent/run_abc"  # {thread} outside a thread is the run id


async def test_stop_removes_the_worktree_and_its_branch_when_nothing_was_committed(repo: Path) -> None:
    manager = GitWorktrees()
    lease = await manager.resolve(request(repo, thread="t1"))
    await manager.release(lease, STOP)
    assert not exists(lease.path)
    assert "agent/t1" not in branches(repo)
    assert worktrees(repo) == [(str(repo), "main")]
    assert manager.leases() == []


async def test_stop_keeps_a_branch_that_has_commits_beyond_its_base(repo: Path) -> None:
    manager = GitWorktrees()
    lease = await manager.resolve(request(repo, thread="t2"))
    (Path(lease.path) / "new.txt").write_text("kept\n")
    git(lease.path, "add", "new.txt")
    git(lease.path, "commit", "-q", "-m", "agent work")
    await manager.release(lease, STOP)
    assert not exists(lease.path)
    assert "agent/t2" in branches(repo)
    assert git(repo, "show", "agent/t2:new.txt") == "kept\n"


async def test_stop_refuses_to_throw_away_uncommitted_changes(repo: Path) -> None:
    manager = GitWorktrees()
    lease = await manager.resolve(request(repo, thread="t3"))
    (Path(lease.path) / "README.md").write_text("changed\n")
    with pytest.raises(WorkspaceError) as info:
        await manager.release(lease, STOP)
    assert info.value.path == lease.path and lease.path in str(info.value)
    assert (Path(lease.path) / "README.md").read_text() == "changed\n"
    manager.remove(lease, force=True)
    assert not exists(lease.path)


async def test_a_dirty_base_tree_is_refused_naming_the_path(repo: Path) -> None:
    (repo / "README.md").write_text("edited, not committed\n")
    with pytest.raises(WorkspaceError) as info:
        await GitWorktrees().resolve(request(repo, thread="t"))
    assert info.value.path == str(repo) and str(repo) in str(info.value)
    assert "uncommitted changes" in str(info.value) and "README.md" in str(info.value)
    assert worktrees(repo) == [(str(repo), "main")]
    lease = await GitWorktrees(allow_dirty=True).resolve(request(repo, thread="t"))
    assert (Path(lease.path) / "README.md").read_text() == "base\n"  # uncommitted changes are not carried over


async def test_a_missing_base_ref_is_refused_naming_the_repository(repo: Path) -> None:
    with pytest.raises(WorkspaceError) as info:
        await GitWorktrees().resolve(request(repo, GitWorktreeWorkspace(base_ref="no-such-branch"), thread="t"))
    assert info.value.path == str(repo)
    assert "'no-such-branch' does not exist" in str(info.value) and str(repo) in str(info.value)


async def test_a_repository_without_commits_is_refused(tmp_path: Path) -> None:
    empty = make_repo(tmp_path / "empty", commit=False)
    with pytest.raises(WorkspaceError) as info:
        await GitWorktrees().resolve(request(empty, thread="t"))
    assert info.value.path == str(empty) and "has no commits yet" in str(info.value)


async def test_a_directory_outside_git_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(WorkspaceError) as info:
        await GitWorktrees().resolve(request(plain, thread="t"))
    assert info.value.path == str(plain) and "is not inside a git repository" in str(info.value)
    assert info.value.option == "workspace_spec"


async def test_a_path_collision_is_refused_naming_the_path(repo: Path, tmp_path: Path) -> None:
    parent = tmp_path / "trees"
    (parent / "agent-t").mkdir(parents=True)
    (parent / "agent-t" / "mine.txt").write_text("not a worktree\n")
    spec = GitWorktreeWorkspace(worktree_parent_dir=str(parent))
    with pytest.raises(WorkspaceError) as info:
        await GitWorktrees().resolve(request(repo, spec, thread="t"))
    assert info.value.path == str(parent / "agent-t") and "path collision" in str(info.value)
    assert (parent / "agent-t" / "mine.txt").read_text() == "not a worktree\n"
    # a worktree at the path on another branch collides too
    git(repo, "worktree", "add", "-q", "-b", "other", str(parent / "agent-u"))
    with pytest.raises(WorkspaceError, match="path collision"):
        await GitWorktrees().resolve(request(repo, spec, thread="u"))


async def test_concurrent_runs_never_share_one_worktree(repo: Path) -> None:
    manager = GitWorktrees()
    spec = GitWorktreeWorkspace(branch_template="fixed")
    first = await manager.resolve(request(repo, spec, run="run_a"))
    with pytest.raises(WorkspaceError, match="in use by another run") as info:
        await manager.resolve(request(repo, spec, run="run_b"))
    assert info.value.path == first.path
    await manager.release(first, KEEP)
    assert (await manager.resolve(request(repo, spec, run="run_c"))).path == first.path
    per_run = [await manager.resolve(request(repo, run=f"run_{i}")) for i in range(3)]
    assert len({lease.path for lease in per_run}) == 3


async def test_a_branch_checked_out_elsewhere_is_refused(repo: Path, tmp_path: Path) -> None:
    git(repo, "branch", "agent/busy")
    git(repo, "worktree", "add", "-q", str(tmp_path / "by-hand"), "agent/busy")
    with pytest.raises(WorkspaceError) as info:
        await GitWorktrees().resolve(request(repo, thread="busy"))
    assert "agent-busy" in info.value.path and "already" in str(info.value)


async def test_other_specs_lease_the_base_directory_unchanged(repo: Path) -> None:
    lease = await GitWorktrees().resolve(request(repo, SharedWorkspace()))
    assert lease.path == str(repo) and lease.kind == "shared"
    passthrough = await PassthroughWorkspaces().resolve(request(repo, GitWorktreeWorkspace(), thread="t"))
    assert passthrough.path == str(repo) and passthrough.kind == "shared"
    assert worktrees(repo) == [(str(repo), "main")]


async def test_a_base_folder_inside_the_repository_maps_to_the_same_folder_of_the_worktree(repo: Path) -> None:
    manager = GitWorktrees()
    lease = await manager.resolve(request(repo / "src", thread="sub"))
    tree = repo.parent / "proj.worktrees" / "agent-sub"
    assert lease.path == str(tree / "src") and lease.root == str(tree)
    assert (Path(lease.path) / "app.py").read_text() == "print('hi')\n"
    assert manager.active() == [str(tree)]
    await manager.release(lease, STOP)
    assert not exists(tree) and manager.active() == []


@pytest.mark.parametrize(
    ("first", "second", "plain"),
    [("a b: c", "a-b-c", "agent/a-b-c"), (".a", "a.", "agent/a"), ("x/y", "x-y", "agent/x-y")],
)
async def test_thread_keys_that_sanitize_alike_never_share_a_worktree(
    repo: Path, first: str, second: str, plain: str
) -> None:
    manager = GitWorktrees()
    one = await manager.resolve(request(repo, thread=first))
    two = await manager.resolve(request(repo, thread=second))
    assert one.path != two.path and one.branch != two.branch and one.created and two.created
    assert one.branch == plain and two.branch.startswith(plain + "-")  # the first keeps the plain sanitized name
    git(repo, "check-ref-format", "--branch", two.branch)
    # Each key finds its own worktree again, in this manager and in a new one (another process).
    for key, lease in ((first, one), (second, two)):
        for again in (manager, GitWorktrees()):
            found = await again.resolve(request(repo, thread=key))
            assert (found.path, found.branch, found.created) == (lease.path, lease.branch, False)
