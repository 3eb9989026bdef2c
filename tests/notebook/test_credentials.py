"""Credentials are checked before a run starts, the same way for ``--driver X``, ``%agent use X`` and ``--map`` /
``map_rows``: a driver without them fails at once, naming what to set, and no CLI process is started."""

from __future__ import annotations

from pathlib import Path

import pytest

from .kernel import Kernel

ROOT = Path(__file__).resolve().parents[2]
CLI_BIN = ROOT / ".cache" / "npm" / "node_modules" / ".bin"

pytestmark = pytest.mark.skipif(
    not (CLI_BIN / "claude").exists() or not (CLI_BIN / "codex").exists(),
    reason="the pinned Claude and Codex CLIs are not installed",
)


def _started(log: Path) -> str:
    return log.read_text() if log.exists() else ""


def test_driver_option_without_credentials_fails_before_starting_and_names_what_to_set(
    spied: tuple[Kernel, Path],
) -> None:
    kernel, log = spied
    codex = kernel.run("%%agent --driver codex\nSay hello")
    assert codex.status == "error" and codex.reply is not None and codex.reply["ename"] == "UsageError"
    text = codex.text()
    assert "the codex driver has no credentials here" in text
    assert "OPENAI_API_KEY" in text and "codex login" in text
    claude = kernel.run("%%agent --driver claude --thread t\nSay hello")
    assert claude.status == "error" and "the claude driver has no credentials here" in claude.text()
    assert "ANTHROPIC_API_KEY" in claude.text()
    assert not kernel.run_views(), "no run started, so no view"
    assert _started(log) == "", "no CLI process may be started to learn that a key is missing"


def test_use_checks_the_same_credentials_without_starting_the_cli(spied: tuple[Kernel, Path]) -> None:
    kernel, log = spied
    for name, key in (("codex", "OPENAI_API_KEY"), ("claude", "ANTHROPIC_API_KEY")):
        cell = kernel.run(f"%agent use {name}")
        assert cell.status == "error"
        assert f"the {name} driver has no credentials here" in cell.text() and key in cell.text()
        assert f"%agent use {name} --force" in cell.text()
    assert _started(log) == ""


def test_a_driver_pinned_with_the_environment_is_checked_too(spied: tuple[Kernel, Path]) -> None:
    kernel, log = spied
    kernel.run_ok("import os; os.environ['ADAPTOR_NB_DRIVER'] = 'codex'")
    cell = kernel.run("%%agent\nSay hello")
    assert cell.status == "error" and "OPENAI_API_KEY" in cell.text()
    assert _started(log) == ""


def test_map_and_map_rows_check_the_same_credentials(spied: tuple[Kernel, Path]) -> None:
    kernel, log = spied
    kernel.run_ok("import pandas as pd\ndf = pd.DataFrame({'q': ['a', 'b']})")
    mapped = kernel.run("%%agent --driver codex --map df\nAnswer {q}")
    assert mapped.status == "error" and "the codex driver has no credentials here" in mapped.text()
    direct = kernel.run(
        "from adaptor_nb import Agent\nfrom adaptor_nb.batch import map_rows\nfrom adaptor_nb.drivers import claude\n"
        "try:\n"
        "    map_rows(Agent(claude.Driver()), df, 'Answer {q}')\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    assert direct.status == "ok", direct.text()
    assert direct.text().startswith("ConfigError") and "the claude driver has no credentials here" in direct.text()
    assert "ANTHROPIC_API_KEY" in direct.text()
    assert _started(log) == ""


def test_a_key_in_the_environment_passes_the_check(spied: tuple[Kernel, Path]) -> None:
    kernel, log = spied
    kernel.run_ok("import os; os.environ['OPENAI_API_KEY'] = 'sk-test-not-real'")
    cell = kernel.run("%agent use codex")
    assert "no credentials" not in cell.text()
    assert "codex --version" in _started(log), "with a key, %agent use goes on to probe the CLI"


def test_status_in_a_headless_kernel_prints_urls_and_paths_intact(spied: tuple[Kernel, Path]) -> None:
    kernel, _ = spied
    status = kernel.run_ok("%agent status").text()
    assert "~/.codex/config.toml" in status and "~config.toml" not in status
    assert "https:install" not in status
    if "cursor: not usable" in status or "cursor: CLI not found" in status:
        assert "curl https://cursor.com/install -fsS | bash" in status
