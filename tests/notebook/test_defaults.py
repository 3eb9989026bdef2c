"""The default driver choice and where a notebook keeps its threads."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from adaptor_nb.notebook._defaults import OFFLINE_NOTE, choose_default, probe
from adaptor_nb.notebook._session import store_path

ROOT = Path(__file__).resolve().parents[2]
CLI_BIN = ROOT / ".cache" / "npm" / "node_modules" / ".bin"
CLAUDE = CLI_BIN / "claude"


async def test_pinned_reference_is_the_offline_demo() -> None:
    choice = await choose_default({"ADAPTOR_NB_DRIVER": "reference"})
    assert choice.name == "reference" and choice.note == OFFLINE_NOTE


async def test_without_credentials_the_reference_driver_is_chosen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{CLI_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    choice = await choose_default({}, home=tmp_path)
    assert choice.name == "reference" and choice.note == OFFLINE_NOTE
    assert set(choice.skipped) == {"claude", "codex", "cursor", "codebuddy"}
    assert all(why for why in choice.skipped.values())


async def test_a_cli_login_file_alone_does_not_count_without_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "auth.json").write_text("{}")
    monkeypatch.setenv("PATH", str(tmp_path))
    driver, why = await probe("codex", {}, tmp_path)
    assert driver is None and why


@pytest.mark.skipif(
    importlib.util.find_spec("adaptor_nb.drivers.claude") is None or not CLAUDE.exists(),
    reason="the Claude driver or the pinned Claude CLI is not installed",
)
async def test_installed_claude_with_a_key_is_chosen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{CLI_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
    choice = await choose_default({"ANTHROPIC_API_KEY": "sk-test-not-a-real-key"}, home=tmp_path)
    assert choice.name == "claude" and choice.note == ""


def test_store_sits_next_to_the_notebook(tmp_path: Path) -> None:
    nb = tmp_path / "work" / "review.ipynb"
    nb.parent.mkdir()
    assert store_path({"JPY_SESSION_NAME": str(nb)}, tmp_path) == tmp_path / "work" / ".adaptor_nb" / "review.sqlite"
    assert store_path({}, tmp_path) == tmp_path / ".adaptor_nb" / "threads.sqlite"
    assert store_path({"ADAPTOR_NB_THREAD_STORE": "/x/y.db"}, tmp_path) == Path("/x/y.db")
