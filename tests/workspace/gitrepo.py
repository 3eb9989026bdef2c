"""Real git repositories in temporary directories, for the workspace tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

IDENTITY = ("-c", "user.name=Test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false")


def git(cwd: Path | str, *args: str) -> str:
    """Run git in ``cwd``; its stdout (raises on failure)."""
    cp = subprocess.run(["git", *IDENTITY, "-C", str(cwd), *args], capture_output=True, text=True, check=True)
    return cp.stdout


def make_repo(path: Path, files: dict[str, str] | None = None, *, commit: bool = True) -> Path:
    """A repository at ``path`` with ``files`` committed on ``main``."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for name, text in (files or {"README.md": "base\n"}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    if commit:
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", "base")
    return path


def status(path: Path | str) -> list[str]:
    """``git status --porcelain`` lines (untracked files included)."""
    return [line for line in git(path, "status", "--porcelain", "--untracked-files=all").splitlines() if line]


def worktrees(repo: Path | str) -> list[tuple[str, str]]:
    """``(path, branch)`` of every worktree of ``repo``, the main one first."""
    out: list[tuple[str, str]] = []
    path = ""
    for line in git(repo, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            path = line[len("worktree ") :]
        elif line.startswith("branch "):
            out.append((path, line[len("branch refs/heads/") :]))
        elif line == "detached":
            out.append((path, ""))
    return out


def branches(repo: Path | str) -> list[str]:
    return git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()


def exists(path: Path | str) -> bool:
    return Path(path).exists()


def is_dir(path: Path | str) -> bool:
    return Path(path).is_dir()


def init_empty(path: Path) -> Path:
    """A repository without commits."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    return path
