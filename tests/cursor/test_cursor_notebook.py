"""The notebook considers Cursor after Claude and Codex, and ``%agent status`` says why a driver was skipped."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from adaptor_nb.notebook._defaults import choose_default, make_driver


def _agent_on_path(bin_dir: Path) -> None:
    bin_dir.mkdir()
    script = bin_dir / "agent"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} -m adaptor_nb.testing._cursor_replay @answer "$@"\n')
    script.chmod(0o755)


async def test_cursor_is_chosen_when_claude_and_codex_are_unusable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _agent_on_path(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("HOME", str(tmp_path))
    choice = await choose_default({"CURSOR_API_KEY": "k-test"}, home=tmp_path)
    assert choice.name == "cursor"
    assert set(choice.skipped) == {"claude", "codex"}


async def test_without_a_key_cursor_is_skipped_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _agent_on_path(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CURSOR_API_KEY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    choice = await choose_default({}, home=tmp_path)
    assert choice.name == "reference"
    assert "CURSOR_API_KEY" in choice.skipped["cursor"]


def test_driver_cursor_is_a_notebook_driver_name() -> None:
    from adaptor_nb.notebook._args import DRIVER_NAMES

    assert "cursor" in DRIVER_NAMES
    assert make_driver("cursor").name == "cursor"
