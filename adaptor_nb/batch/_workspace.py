"""``map_rows(..., workspace=GitWorktreeWorkspace(...))``: every row runs in its own provisioned workspace."""

from __future__ import annotations

from typing import Any

from .._errors import ConfigError
from ..workspace._specs import SPEC_TYPES, GitWorktreeWorkspace


def is_spec(workspace: Any) -> bool:
    return isinstance(workspace, SPEC_TYPES)


def check_workspace(workspace: Any, agent: Any) -> None:
    """Raise a ConfigError (``option="workspace"``) for a value map_rows cannot use."""
    if workspace is None or isinstance(workspace, str):
        return
    if not is_spec(workspace):
        raise ConfigError(
            f"workspace must be a template string or a workspace spec, got {type(workspace).__name__}",
            option="workspace",
        )
    if isinstance(workspace, GitWorktreeWorkspace) and agent.settings.workspace_manager is None:
        raise ConfigError(
            "workspace=GitWorktreeWorkspace(...) needs an Agent made with workspace_manager= (for example "
            "GitWorktrees()); without one every row would share the base directory",
            option="workspace",
        )


def row_key(label: Any) -> str:
    """The row key a branch template's ``{row}`` (and, outside threads, ``{thread}``) is filled with."""
    return str(label)


def row_options(spec: Any, label: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The send options that put one row in its own workspace: the spec and the row key in the metadata."""
    metadata = {**dict(options.get("metadata") or {}), "row": row_key(label)}
    return {"workspace_spec": spec, "metadata": metadata}
