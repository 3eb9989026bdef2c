"""Rendering a row's prompt, thread key and workspace from templates over its columns."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from .._views._interpolate import interpolate


def row_namespace(label: Hashable, row: dict[Hashable, Any]) -> dict[str, Any]:
    """The row's columns by name (string column names only) plus ``index`` for its label."""
    ns: dict[str, Any] = {str(k): v for k, v in row.items() if isinstance(k, str)}
    ns.setdefault("index", label)
    return ns


def render(template: str, namespace: dict[str, Any]) -> str:
    """The magic's interpolation rules: ``{col}`` / ``{col.attr}``, ``{{`` for a literal brace."""
    return interpolate(template, namespace)
