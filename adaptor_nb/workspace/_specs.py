"""Workspace specs (§12): how a run's working directory is provisioned, and the lease a manager hands out."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from .._errors import ConfigError


@dataclass(frozen=True)
class SharedWorkspace:
    """Every run works in the base directory itself (the default)."""


@dataclass(frozen=True)
class GitWorktreeWorkspace:
    """A git worktree per thread (or per run, or per row) on a branch named from ``branch_template``.

    The template may use ``{thread}``, ``{run}`` and ``{row}``; ``{thread}`` falls back to the row key, then the run
    id, for runs outside a thread. ``worktree_parent_dir`` defaults to a directory beside the repository."""

    base_ref: str = "HEAD"
    branch_template: str = "agent/{thread}"
    worktree_parent_dir: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.base_ref, str) or not self.base_ref.strip():
            raise ConfigError("GitWorktreeWorkspace.base_ref must be a non-empty ref", option="workspace_spec")
        if not isinstance(self.branch_template, str) or not self.branch_template.strip():
            raise ConfigError("GitWorktreeWorkspace.branch_template must not be empty", option="workspace_spec")


@dataclass(frozen=True)
class DriverManagedWorkspace:
    """The driver (or its CLI) provisions the workspace itself; the core passes the base directory on."""


WorkspaceSpec = SharedWorkspace | GitWorktreeWorkspace | DriverManagedWorkspace
SPEC_TYPES = (SharedWorkspace, GitWorktreeWorkspace, DriverManagedWorkspace)


class WorkspaceReleaseMode(enum.Enum):
    """``KEEP`` leaves the workspace for inspection or continuation; ``STOP`` removes what the lease created."""

    KEEP = "keep"
    STOP = "stop"


@dataclass(frozen=True)
class WorkspaceRequest:
    """What a manager needs to resolve a lease: the base directory, the spec and the run's identity."""

    base_cwd: str
    spec: WorkspaceSpec
    run_id: str = ""
    thread_key: str = ""
    metadata: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkspaceLease:
    """A resolved workspace: ``path`` is where the run works. ``kind`` is ``shared``, ``worktree`` or ``driver``;
    worktree leases carry the branch, the repository and the base commit; ``created`` says the lease made it."""

    path: str
    kind: str = "shared"
    branch: str = ""
    repository: str = ""
    base_commit: str = ""
    created: bool = False
    root: str = ""
    """The worktree's top directory when ``path`` is a folder inside it (the base was a folder of the repository)."""
    on_release: WorkspaceReleaseMode = WorkspaceReleaseMode.KEEP
    """The mode the core releases the lease with when the run ends (the manager decides)."""


@runtime_checkable
class WorkspaceManager(Protocol):
    """Resolves workspace leases before launch and releases them after the run."""

    async def resolve(self, request: WorkspaceRequest) -> WorkspaceLease: ...

    async def release(self, lease: WorkspaceLease, mode: WorkspaceReleaseMode) -> None: ...


class WorkspaceError(ConfigError):
    """A workspace could not be provisioned; ``path`` names the directory at fault."""

    def __init__(self, message: str, *, path: str, option: str = "workspace_spec") -> None:
        super().__init__(message, option=option, details={"path": path})
        self.path = path


def check_spec(value: object) -> None:
    """Raise a ConfigError unless ``value`` is None or one of the sealed spec types."""
    if value is not None and not isinstance(value, SPEC_TYPES):
        raise ConfigError(
            "workspace_spec must be SharedWorkspace(), GitWorktreeWorkspace(...) or DriverManagedWorkspace(), "
            f"got {type(value).__name__}",
            option="workspace_spec",
        )
