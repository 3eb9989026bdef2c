"""Fixtures for the Cursor Agent driver tests: the replay stand-in CLI on recorded stream-json."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from adaptor_nb.drivers import cursor
from adaptor_nb.testing import cursor_replay_command

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cursor"
SECRET = "cursor-test-key-0123456789abcdef"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def make_driver(workspace: Path) -> Callable[..., cursor.Driver]:
    """A Cursor driver whose CLI is the replay stand-in on ``recording`` (a fixture name or a path)."""

    def build(recording: str, *options: str, **fields: Any) -> cursor.Driver:
        path = recording if recording.startswith(("/", "@")) else str(FIXTURES / recording)
        cfg = cursor.Config(
            command=cursor_replay_command(path, *options),
            cwd=str(workspace),
            secret_env={"CURSOR_API_KEY": SECRET},
            grace_period=1.0,
            **fields,
        )
        return cursor.Driver(cfg)

    return build
