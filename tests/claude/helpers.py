"""Small helpers shared by the Claude driver tests (the general ones live in tests/_support.py)."""

from __future__ import annotations

from _support import drain, of, outcome

__all__ = ["drain", "of", "outcome"]
