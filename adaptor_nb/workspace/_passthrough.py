"""The passthrough backend: leases the base directory unchanged and never creates a worktree."""

from __future__ import annotations

from ._specs import DriverManagedWorkspace, WorkspaceLease, WorkspaceReleaseMode, WorkspaceRequest


class PassthroughWorkspaces:
    """Used when no ``workspace_manager=`` is given: every spec leases the base directory as it is."""

    async def resolve(self, request: WorkspaceRequest) -> WorkspaceLease:
        kind = "driver" if isinstance(request.spec, DriverManagedWorkspace) else "shared"
        return WorkspaceLease(path=request.base_cwd, kind=kind)

    async def release(self, lease: WorkspaceLease, mode: WorkspaceReleaseMode) -> None:
        return None
