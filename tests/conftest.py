"""Fixtures shared by every test folder: a fresh workspace directory and a private HOME."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty working directory for the agent."""
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A private HOME, so no CLI reads or writes the real user's configuration."""
    h = tmp_path / "home"
    h.mkdir(exist_ok=True)
    return h
