"""Worktrees in the notebook: ``%%agent --worktree`` cells, the workspace in the view's header and the threads
table, and ``%agent worktrees`` (list, clean)."""

from __future__ import annotations

import os
from typing import Any

from ._args import OptionError


def notebook_manager(session: Any) -> Any:
    """The notebook's GitWorktrees (one per kernel). Starting from ``HEAD`` while the notebook itself has unsaved
    or uncommitted edits is the normal case here, so a dirty base tree is allowed (its changes are not carried)."""
    manager = getattr(session, "_worktrees", None)
    if manager is None:
        from ..workspace._git import GitWorktrees

        manager = GitWorktrees(allow_dirty=True)
        session._worktrees = manager
    return manager


def worktree_call(agent: Any, call: dict[str, Any]) -> None:
    """Add the worktree spec to a cell's call options; refuse an Agent that has no workspace manager."""
    from ..workspace._specs import GitWorktreeWorkspace

    settings = getattr(agent, "settings", None)
    if getattr(settings, "workspace_manager", None) is None:
        raise OptionError(
            "%%agent: --worktree needs an Agent made with workspace_manager=GitWorktrees() "
            "(the notebook's own Agents have one; --agent names one without)"
        )
    call["workspace_spec"] = GitWorktreeWorkspace()


def result_workspace(result: Any) -> str:
    """``<path> (<branch>)`` from a Result's metadata, for the threads table."""
    metadata = getattr(result, "metadata", None) or {}
    path = metadata.get("workspace.path", "")
    branch = metadata.get("workspace.branch", "")
    return f"{path} ({branch})" if path and branch else path


def worktrees_command(session: Any, words: list[str]) -> None:
    """``%agent worktrees [clean [--force]]``."""
    manager = notebook_manager(session)
    base = os.getcwd()
    if not words:
        trees = manager.worktrees(base)
        if not trees:
            print("no worktrees yet (start one with %%agent --thread KEY --worktree)")
            return
        active = set(manager.active())
        for lease in trees:
            state = "in use" if lease.path in active else "idle"
            print(f"{lease.branch}\t{lease.path}\t{state}")
        return
    if words[0] != "clean" or any(w != "--force" for w in words[1:]):
        raise OptionError(f"%agent worktrees: unknown arguments {' '.join(words)!r}; try %agent help")
    force = "--force" in words[1:]
    removed, kept = 0, []
    active = set(manager.active())
    for lease in manager.worktrees(base):
        if lease.path in active:
            kept.append(f"{lease.path}: in use by a run")
            continue
        try:
            manager.remove(lease, force=force)
        except Exception as exc:
            kept.append(str(exc))
        else:
            removed += 1
    print(f"removed {removed} worktree{'s' if removed != 1 else ''}")
    for why in kept:
        print(f"  kept {why}")
