"""Worktree resolve + release through GitWorktrees beside ``git worktree add`` / ``remove`` run by hand.

Baseline per round: ``git worktree add -b B P <commit>``, ``git worktree remove P``, ``git branch -D B``.
Subject per round: ``GitWorktrees.resolve`` (locate the repository and base commit, check the base tree is clean,
lock, add) then ``release(STOP)`` (lock, remove, delete the branch if it has no commits). Rounds alternate; medians.
Target: subject <= 1.2x baseline.

    PYTHONPATH=. .venv/bin/python benchmarks/workspaces.py [--rounds 30] [--files 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from adaptor_nb import GitWorktrees, GitWorktreeWorkspace, WorkspaceReleaseMode, WorkspaceRequest

IDENTITY = ["-c", "user.name=Bench", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *IDENTITY, "-C", str(cwd), *args], capture_output=True, text=True, check=True).stdout


def make_repo(root: Path, files: int) -> Path:
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for i in range(files):
        sub = repo / f"pkg{i % 10}"
        sub.mkdir(exist_ok=True)
        (sub / f"mod{i}.py").write_text(f"VALUE = {i}\n" * 20)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return repo


def by_hand(repo: Path, parent: Path, i: int) -> float:
    commit = git(repo, "rev-parse", "HEAD").strip()  # not timed: the baseline knows its commit already
    path = parent / f"hand-{i}"
    t0 = time.perf_counter()
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", "-b", f"hand/{i}", str(path), commit], check=True)
    subprocess.run(["git", "-C", str(repo), "worktree", "remove", str(path)], check=True)
    subprocess.run(["git", "-C", str(repo), "branch", "-q", "-D", f"hand/{i}"], check=True)
    return time.perf_counter() - t0


async def managed(manager: GitWorktrees, repo: Path, parent: Path, i: int) -> float:
    spec = GitWorktreeWorkspace(branch_template="bench/{run}", worktree_parent_dir=str(parent))
    req = WorkspaceRequest(base_cwd=str(repo), spec=spec, run_id=f"r{i}")
    t0 = time.perf_counter()
    lease = await manager.resolve(req)
    await manager.release(lease, WorkspaceReleaseMode.STOP)
    return time.perf_counter() - t0


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--files", type=int, default=200, help="files in the repository's tree")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = make_repo(root, args.files)
        parent = root / "trees"
        parent.mkdir()
        manager = GitWorktrees()
        base: list[float] = []
        subject: list[float] = []
        for i in range(args.rounds):
            base.append(by_hand(repo, parent, i))
            subject.append(await managed(manager, repo, parent, i))
        assert git(repo, "worktree", "list").count("\n") == 1, "a worktree was left behind"
    b, s = statistics.median(base), statistics.median(subject)
    print(f"repository: {args.files} files; {args.rounds} rounds, alternating; medians")
    print(f"git worktree add + remove + branch -D by hand : {b * 1000:8.1f} ms")
    print(f"GitWorktrees resolve + release(STOP)          : {s * 1000:8.1f} ms")
    ratio = s / b
    print(f"ratio {ratio:.2f}x  (target <= 1.2x: {'met' if ratio <= 1.2 else 'NOT met'})")


if __name__ == "__main__":
    asyncio.run(main())
