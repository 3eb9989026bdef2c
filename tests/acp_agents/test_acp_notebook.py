"""The notebook spelling of the ACP driver: ``--driver acp:qwen``, ``%agent use acp:gemini`` and the presets
``%agent status`` lists (those whose agent is on PATH), with what to fix."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from adaptor_nb.drivers import acp
from adaptor_nb.notebook._args import parse_cell_line, parse_use
from adaptor_nb.notebook._defaults import acp_on_path, inspect_driver, make_driver
from adaptor_nb.notebook._help import ACP_PRESETS, CELL_HELP


def test_the_notebook_knows_every_preset_and_says_so_in_its_help() -> None:
    assert set(ACP_PRESETS) == set(acp.PRESETS)
    assert "acp:AGENT (qwen, codex" in CELL_HELP


def test_acp_names_parse_in_cells_and_in_use() -> None:
    assert parse_cell_line("--driver acp:qwen").driver == "acp:qwen"
    assert parse_use(["acp:gemini"]).driver == "acp:gemini"


def test_an_acp_name_makes_the_preset_driver() -> None:
    driver = make_driver("acp:codebuddy", {"X": "1"})
    assert isinstance(driver, acp.Driver)
    assert driver.config.command == ["codebuddy-headless", "--acp"] and driver.config.env["X"] == "1"


def _agent_on_path(tmp_path: Path, name: str) -> None:
    exe = tmp_path / name
    exe.write_text("#!/bin/sh\necho 9.9.9\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)


async def test_status_lists_the_presets_on_path_with_their_credential_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _agent_on_path(tmp_path, "gemini")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    assert acp_on_path() == ("acp:gemini",)
    missing = await inspect_driver("acp:gemini")
    assert missing.driver is None and "no credentials" in missing.summary()
    assert "GEMINI_API_KEY" in missing.fix()
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    ready = await inspect_driver("acp:gemini")
    assert ready.driver is not None and "credentials from GEMINI_API_KEY" in ready.summary()


async def test_a_preset_not_installed_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    outcome = await inspect_driver("acp:goose")
    assert outcome.driver is None and "goose" in outcome.fix()
