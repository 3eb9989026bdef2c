"""Several processes resolving the same thread's worktree at once: one creates it, the others reuse it, and git
state stays sound."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .gitrepo import git, worktrees

WORKER = str(Path(__file__).with_name("resolve_worker.py"))
PROCESSES = 6


def test_processes_resolving_one_thread_share_one_worktree_without_corrupting_git(repo: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, WORKER, str(repo), "review"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    for p in procs:  # every worker is up and blocked before any of them may start
        assert p.stdout is not None and p.stdout.readline().strip() == "waiting"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    answers = []
    for p in procs:
        out, _ = p.communicate(timeout=120)
        assert p.returncode == 0
        answers.append(json.loads(out.strip().splitlines()[-1]))
    assert all("error" not in a for a in answers), answers
    assert {a["path"] for a in answers} == {str(repo.parent / "proj.worktrees" / "agent-review")}
    assert sum(a["created"] for a in answers) == 1
    assert worktrees(repo) == [(str(repo), "main"), (answers[0]["path"], "agent/review")]
    git(repo, "fsck", "--no-progress")
    git(repo, "worktree", "prune", "--dry-run")
    assert git(answers[0]["path"], "status", "--porcelain") == ""


def test_processes_resolving_distinct_threads_each_get_their_own(repo: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, WORKER, str(repo), f"t{i}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        for i in range(4)
    ]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "waiting"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    answers = [json.loads(p.communicate(timeout=120)[0].strip().splitlines()[-1]) for p in procs]
    assert sorted(a["branch"] for a in answers) == [f"agent/t{i}" for i in range(4)]
    assert len(worktrees(repo)) == 5
    git(repo, "fsck", "--no-progress")
