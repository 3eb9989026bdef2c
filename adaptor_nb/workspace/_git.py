"""``GitWorktrees``: a workspace manager that gives each thread, run or row its own git worktree (real ``git``)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ._lock import repository_lock
from ._names import branch_name, directory_name, distinct_branch, identity
from ._passthrough import PassthroughWorkspaces
from ._specs import GitWorktreeWorkspace, WorkspaceError, WorkspaceLease, WorkspaceReleaseMode, WorkspaceRequest

BASE_FILE = "adaptor_nb-base"  # in the worktree's private git directory: the commit the branch started from
KEY_FILE = "adaptor_nb-key"  # beside it: what the worktree stands for (see _names.identity)
_ENV = {**os.environ, "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}


@dataclass(frozen=True)
class _Repo:
    top: str
    common: str
    commit: str


def _git(git: str, cwd: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([git, "-C", cwd, *args], capture_output=True, text=True, env=_ENV, check=False)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


class GitWorktrees:
    """Resolve ``GitWorktreeWorkspace`` specs to worktrees; other specs lease the base directory unchanged.

    ``parent_dir`` is where worktrees go when the spec names none (default: ``<repo>.worktrees`` beside the
    repository). ``allow_dirty`` lets a worktree start from ``HEAD`` although the base tree has uncommitted changes
    (they are not carried over). Resolution and removal hold a lock in the repository's git directory, so processes
    sharing one repository never run them at the same time. A thread's worktree is kept when its run ends (the
    thread continues there); with ``remove_run_worktrees=True`` the worktree of a run outside any thread is removed
    when the run ends (its branch too, unless the run committed to it)."""

    def __init__(
        self,
        parent_dir: str | None = None,
        *,
        allow_dirty: bool = False,
        remove_run_worktrees: bool = False,
        git: str = "git",
    ) -> None:
        self._parent = parent_dir
        self._remove_runs = remove_run_worktrees
        self._allow_dirty = allow_dirty
        self._git_bin = git
        self._active: dict[str, tuple[str, int]] = {}  # path -> (owner: thread key or run id, leases held)
        self._mutex = threading.Lock()
        self._made: dict[str, WorkspaceLease] = {}
        self._passthrough = PassthroughWorkspaces()

    def __repr__(self) -> str:
        return f"GitWorktrees(parent_dir={self._parent!r}, allow_dirty={self._allow_dirty})"

    # -- the protocol ------------------------------------------------------------------------------------

    async def resolve(self, request: WorkspaceRequest) -> WorkspaceLease:
        if not isinstance(request.spec, GitWorktreeWorkspace):
            return await self._passthrough.resolve(request)
        return await asyncio.to_thread(self.resolve_sync, request)

    async def release(self, lease: WorkspaceLease, mode: WorkspaceReleaseMode) -> None:
        if lease.kind != "worktree":
            return
        await asyncio.to_thread(self.release_sync, lease, mode)

    # -- what the notebook and scripts use -------------------------------------------------------------

    def leases(self) -> list[WorkspaceLease]:
        """The worktrees this manager resolved (created or reused) and has not removed, oldest first."""
        with self._mutex:
            return list(self._made.values())

    def active(self) -> list[str]:
        """Paths leased by runs that have not ended."""
        with self._mutex:
            return sorted(self._active)

    def remove(self, lease: WorkspaceLease, *, force: bool = False) -> None:
        """Remove a worktree (refused by git when it has changes, unless ``force``) and its branch when the branch
        has no commits beyond its base."""
        self.release_sync(lease, WorkspaceReleaseMode.STOP, force=force)

    def worktrees(self, base: str, spec: GitWorktreeWorkspace | None = None) -> list[WorkspaceLease]:
        """The worktrees of ``base``'s repository under the parent directory ``spec`` (or this manager) puts them
        in, made by any process; ``[]`` when ``base`` is not in a repository with commits."""
        spec = spec or GitWorktreeWorkspace()
        cp = _git(self._git_bin, base, "rev-parse", "--path-format=absolute", "--show-toplevel")
        if cp.returncode != 0:
            return []
        top = cp.stdout.strip()
        common = _git(self._git_bin, top, "rev-parse", "--path-format=absolute", "--git-common-dir").stdout.strip()
        parent = self._parent_dir(spec, top) + os.sep
        listing = _git(self._git_bin, top, "worktree", "list", "--porcelain")
        out: list[WorkspaceLease] = []
        path = ""
        for line in [*listing.stdout.splitlines(), ""]:
            if line.startswith("worktree "):
                path = line[len("worktree ") :]
            elif line.startswith("branch ") and path.startswith(parent):
                branch = line[len("branch refs/heads/") :]
                found = self._existing(path, common)
                base_commit = _read(os.path.join(found[1], BASE_FILE)) if found else ""
                out.append(
                    WorkspaceLease(path=path, kind="worktree", branch=branch, repository=top, base_commit=base_commit)
                )
        return out

    # -- resolution ------------------------------------------------------------------------------------

    def _locate(self, base: str, ref: str) -> _Repo:
        cp = _git(
            self._git_bin,
            base,
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--git-common-dir",
            "--verify",
            "-q",
            f"{ref}^{{commit}}",
        )
        lines = cp.stdout.split("\n")
        if cp.returncode == 0 and len(lines) >= 3:
            return _Repo(top=lines[0], common=lines[1], commit=lines[2])
        if len(lines) < 3 or not lines[0]:
            raise WorkspaceError(
                f"cannot make a git worktree: {base} is not inside a git repository"
                f" ({_first_line(cp.stderr) or 'git rev-parse failed'})",
                path=base,
            )
        top = lines[0]
        if _git(self._git_bin, top, "rev-parse", "--verify", "-q", "HEAD^{commit}").returncode != 0:
            raise WorkspaceError(
                f"cannot make a git worktree: the repository {top} has no commits yet; commit something first",
                path=top,
            )
        raise WorkspaceError(f"cannot make a git worktree: base_ref {ref!r} does not exist in {top}", path=top)

    def _parent_dir(self, spec: GitWorktreeWorkspace, top: str) -> str:
        parent = spec.worktree_parent_dir or self._parent
        if parent:
            return os.path.abspath(os.path.expanduser(parent))
        return os.path.join(os.path.dirname(top), os.path.basename(top) + ".worktrees")

    def _claim(self, spec: GitWorktreeWorkspace, repo: _Repo, branch: str, wanted: str) -> tuple[str, str]:
        """The branch and path for ``wanted``: the sanitized name, unless its worktree stands for something else
        (two keys that sanitize alike), then that name with a digest of ``wanted``. A worktree made before keys
        were kept is claimed by the first to resolve it."""
        parent = self._parent_dir(spec, repo.top)
        for _ in range(4):
            path = os.path.join(parent, directory_name(branch))
            found = self._existing(path, repo.common)
            owner = _read(os.path.join(found[1], KEY_FILE)) if found is not None else ""
            if not owner and found is not None:
                _write(os.path.join(found[1], KEY_FILE), wanted)
            if not owner or owner == wanted:
                return branch, path
            branch = distinct_branch(branch, wanted)
        raise WorkspaceError(f"no free branch name for {wanted!r} (last tried {branch!r})", path=parent)

    def _existing(self, path: str, common: str) -> tuple[str, str] | None:
        """``(branch, private git dir)`` when ``path`` is a worktree of this repository, else None."""
        try:
            with open(os.path.join(path, ".git"), encoding="utf-8") as fh:
                pointer = fh.read().strip()
        except OSError:
            return None
        if not pointer.startswith("gitdir:"):
            return None
        gitdir = os.path.abspath(os.path.join(path, pointer[len("gitdir:") :].strip()))
        if os.path.realpath(os.path.dirname(os.path.dirname(gitdir))) != os.path.realpath(common):
            return None
        try:
            with open(os.path.join(gitdir, "HEAD"), encoding="utf-8") as fh:
                head = fh.read().strip()
        except OSError:
            return None
        return head.removeprefix("ref: refs/heads/"), gitdir

    def _check_clean(self, top: str) -> None:
        cp = _git(self._git_bin, top, "status", "--porcelain", "--untracked-files=no")
        changed = [line[3:] for line in cp.stdout.splitlines() if line.strip()]
        if changed:
            shown = ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "")
            raise WorkspaceError(
                f"cannot make a git worktree from HEAD: the base tree {top} has uncommitted changes ({shown}); "
                "commit or stash them, name another base_ref, or use GitWorktrees(allow_dirty=True)",
                path=top,
            )

    def _add(self, repo: _Repo, branch: str, path: str) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        cp = _git(self._git_bin, repo.top, "worktree", "add", "--quiet", "-b", branch, path, repo.commit)
        if cp.returncode != 0 and "already exists" in cp.stderr and "branch" in cp.stderr:
            cp = _git(self._git_bin, repo.top, "worktree", "add", "--quiet", path, branch)
        if cp.returncode != 0 and "already registered" in cp.stderr:
            _git(self._git_bin, repo.top, "worktree", "prune")
            cp = _git(self._git_bin, repo.top, "worktree", "add", "--quiet", path, branch)
        if cp.returncode != 0:
            raise WorkspaceError(
                f"git worktree add {path} (branch {branch}) failed: {_first_line(cp.stderr)}",
                path=path,
            )

    def resolve_sync(self, request: WorkspaceRequest) -> WorkspaceLease:
        """Blocking ``resolve`` (the async one runs this in a worker thread)."""
        spec = request.spec
        assert isinstance(spec, GitWorktreeWorkspace)
        base = os.path.abspath(request.base_cwd or os.getcwd())
        if not os.path.isdir(base):
            raise WorkspaceError(f"cannot make a git worktree: the base directory {base} does not exist", path=base)
        repo = self._locate(base, spec.base_ref)
        branch = branch_name(
            spec.branch_template,
            thread=request.thread_key,
            run=request.run_id,
            row=request.metadata.get("row", ""),
        )
        wanted = json.dumps(  # one line, whatever the key holds
            identity(
                spec.branch_template,
                thread=request.thread_key,
                run=request.run_id,
                row=request.metadata.get("row", ""),
            )
        )
        with repository_lock(repo.common):
            branch, path = self._claim(spec, repo, branch, wanted)
            with self._mutex:
                owner, _ = self._active.get(path, ("", 0))
                # A thread's own runs may resolve its worktree together: the thread's lease lets one of them run.
                if owner and not (request.thread_key and owner == request.thread_key):
                    raise WorkspaceError(
                        f"the worktree {path} (branch {branch}) is in use by another run; concurrent runs need "
                        "distinct branches (put {run} or {row} in branch_template)",
                        path=path,
                    )
            found = self._existing(path, repo.common)
            if found is not None:
                head, gitdir = found
                if head != branch:
                    raise WorkspaceError(
                        f"path collision: {path} is a worktree on {head!r}, not on branch {branch!r}", path=path
                    )
                lease = WorkspaceLease(
                    path=path,
                    kind="worktree",
                    branch=branch,
                    repository=repo.top,
                    base_commit=_read(os.path.join(gitdir, BASE_FILE)),
                    created=False,
                )
            else:
                if os.path.lexists(path):
                    raise WorkspaceError(
                        f"path collision: {path} exists and is not a worktree of {repo.top}", path=path
                    )
                if spec.base_ref == "HEAD" and not self._allow_dirty:
                    self._check_clean(repo.top)
                self._add(repo, branch, path)
                found = self._existing(path, repo.common)
                if found is not None:
                    _write(os.path.join(found[1], BASE_FILE), repo.commit)
                    _write(os.path.join(found[1], KEY_FILE), wanted)
                lease = WorkspaceLease(
                    path=path,
                    kind="worktree",
                    branch=branch,
                    repository=repo.top,
                    base_commit=repo.commit,
                    created=True,
                )
            if self._remove_runs and not request.thread_key:
                lease = replace(lease, on_release=WorkspaceReleaseMode.STOP)
            inside = os.path.relpath(base, repo.top)
            if inside != "." and os.path.isdir(os.path.join(path, inside)):
                # The base is a folder of the repository (a notebooks/ folder, say): work in the same folder.
                lease = replace(lease, root=path, path=os.path.join(path, inside))

            with self._mutex:
                held = self._active.get(path, ("", 0))[1]
                self._active[path] = (request.thread_key or request.run_id or path, held + 1)
                self._made[path] = lease
        return lease

    # -- release ---------------------------------------------------------------------------------------

    def release_sync(self, lease: WorkspaceLease, mode: WorkspaceReleaseMode, *, force: bool = False) -> None:
        """Blocking ``release``: ``KEEP`` ends the lease; ``STOP`` also removes the worktree and its unused branch."""
        with self._mutex:
            owner, held = self._active.pop(lease.root or lease.path, ("", 0))
            if held > 1:
                self._active[lease.root or lease.path] = (owner, held - 1)
        if mode is WorkspaceReleaseMode.KEEP:
            return
        common = _git(self._git_bin, lease.repository, "rev-parse", "--path-format=absolute", "--git-common-dir")
        with repository_lock(common.stdout.strip() or lease.repository):
            root = lease.root or lease.path
            args: Sequence[str] = ("worktree", "remove", *(("--force",) if force else ()), root)
            cp = _git(self._git_bin, lease.repository, *args)
            if cp.returncode != 0 and os.path.exists(root):
                raise WorkspaceError(f"git worktree remove {root} failed: {_first_line(cp.stderr)}", path=root)
            if lease.branch and lease.base_commit:
                # Deletes the branch only while it still points at its base: work committed on it is kept.
                _git(
                    self._git_bin, lease.repository, "update-ref", "-d", f"refs/heads/{lease.branch}", lease.base_commit
                )
        with self._mutex:
            self._made.pop(lease.root or lease.path, None)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text + "\n")
