"""The workspace line of a view's header: the fields a ``runtime`` notice sets, and the text they show."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def header_fields(data: Mapping[str, Any]) -> dict[str, str] | None:
    """The header fields a ``runtime`` notice sets: the workspace path and branch once the worktree is ready."""
    if data.get("phase") != "workspace_ready":
        return None
    return {"workspace": str(data.get("path", "")), "branch": str(data.get("branch", ""))}


def header_text(header: Mapping[str, Any]) -> str:
    """``worktree <path> (branch <b>)`` for the header, or ``""``."""
    if not header.get("workspace"):
        return ""
    branch = f" (branch {header['branch']})" if header.get("branch") else ""
    return f"worktree {header['workspace']}{branch}"
