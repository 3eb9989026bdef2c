"""Fixtures for the workspace tests: a real repository with one commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from .gitrepo import make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "proj", {"README.md": "base\n", "src/app.py": "print('hi')\n"})
