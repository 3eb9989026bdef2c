"""Workspaces (§12): specs for where a run works, the manager protocol, the passthrough and git worktree backends."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._naming import lazy_exports

_PUBLIC: dict[str, str] = {
    "DriverManagedWorkspace": "._specs",
    "GitWorktreeWorkspace": "._specs",
    "GitWorktrees": "._git",
    "PassthroughWorkspaces": "._passthrough",
    "WorkspaceReleaseMode": "._specs",
    "SharedWorkspace": "._specs",
    "WorkspaceError": "._specs",
    "WorkspaceLease": "._specs",
    "WorkspaceManager": "._specs",
    "WorkspaceRequest": "._specs",
    "WorkspaceSpec": "._specs",
}

if TYPE_CHECKING:
    from ._git import GitWorktrees as GitWorktrees
    from ._passthrough import PassthroughWorkspaces as PassthroughWorkspaces
    from ._specs import DriverManagedWorkspace as DriverManagedWorkspace
    from ._specs import GitWorktreeWorkspace as GitWorktreeWorkspace
    from ._specs import SharedWorkspace as SharedWorkspace
    from ._specs import WorkspaceError as WorkspaceError
    from ._specs import WorkspaceLease as WorkspaceLease
    from ._specs import WorkspaceManager as WorkspaceManager
    from ._specs import WorkspaceReleaseMode as WorkspaceReleaseMode
    from ._specs import WorkspaceRequest as WorkspaceRequest
    from ._specs import WorkspaceSpec as WorkspaceSpec

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), _PUBLIC)
