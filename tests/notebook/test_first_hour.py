"""A new user's first cells without credentials: drivers that cannot run are refused with what to fix."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .kernel import Kernel

ROOT = Path(__file__).resolve().parents[2]
CLI_BIN = ROOT / ".cache" / "npm" / "node_modules" / ".bin"

pytestmark = pytest.mark.skipif(
    not (CLI_BIN / "claude").exists() or not (CLI_BIN / "codex").exists(),
    reason="the pinned Claude and Codex CLIs are not installed",
)


@pytest.fixture
def bare_kernel(tmp_path: Path) -> Iterator[Kernel]:
    """A kernel with both CLIs on PATH, an empty HOME and no API key of any kind."""
    home = tmp_path / "home"
    home.mkdir()
    blank = {
        key: ""
        for key in os.environ
        if key.endswith(("_API_KEY", "_AUTH_TOKEN", "_OAUTH_TOKEN")) or key.startswith("CLAUDE_CODE_USE_")
    }
    env = {
        **blank,
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "PATH": f"{CLI_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "ADAPTOR_NB_THREAD_STORE": str(tmp_path / "threads.adaptor_nb.sqlite"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    k = Kernel(tmp_path, env)
    try:
        k.run_ok("%load_ext adaptor_nb")
        yield k
    finally:
        k.shutdown()
        assert not k.km.is_alive()


def test_use_refuses_a_driver_without_credentials_and_says_what_to_set(bare_kernel: Kernel) -> None:
    codex = bare_kernel.run("%agent use codex")
    assert codex.status == "error"
    text = codex.text()
    assert "UsageError" in text and "cannot run here" in text
    assert "OPENAI_API_KEY" in text and "codex login" in text and "--force" in text

    claude = bare_kernel.run("%agent use claude")
    assert claude.status == "error"
    assert "ANTHROPIC_API_KEY" in claude.text() and "--force" in claude.text()

    status = bare_kernel.run_ok("%agent status").text()
    assert "default driver: chosen at the first %%agent cell" in status


def test_force_pins_a_driver_the_probe_refuses(bare_kernel: Kernel) -> None:
    pinned = bare_kernel.run_ok("%agent use codex --force").text()
    assert "use the codex driver" in pinned
    assert "default driver: codex (set with %agent use)" in bare_kernel.run_ok("%agent status").text()


def test_use_inside_other_code_is_checked_too(bare_kernel: Kernel) -> None:
    mixed = bare_kernel.run("x = 1\n%agent use claude\n")
    assert mixed.status == "error" and "ANTHROPIC_API_KEY" in mixed.text()
    assert "use the reference driver" in bare_kernel.run_ok("x = 1\n%agent use reference\n").text()


def test_status_shows_each_drivers_probe_before_any_run(bare_kernel: Kernel) -> None:
    status = bare_kernel.run_ok("%agent status").text()
    lines = {line.strip().split(":", 1)[0]: line.strip() for line in status.splitlines() if line.startswith("  ")}
    assert "found" in lines["claude"] and "version" in lines["claude"] and "no credentials" in lines["claude"]
    assert "not usable" in lines["claude"]
    assert "found" in lines["codex"] and "no credentials" in lines["codex"] and "not usable" in lines["codex"]
    assert "always usable" in lines["reference"]
    assert "ANTHROPIC_API_KEY" in status and "OPENAI_API_KEY" in status


def test_help_and_driver_option_list_only_installed_drivers(bare_kernel: Kernel) -> None:
    help_text = bare_kernel.run_ok("%agent help").text()
    from adaptor_nb.notebook._help import installed_drivers

    listed = ", ".join(installed_drivers())
    assert f"--driver NAME         use a built-in driver: {listed}" in help_text
    assert listed == "claude, codex, cursor, codebuddy, reference"  # every built-in driver ships in this package
    bad = bare_kernel.run("%%agent --driver nosuch\nhello")
    assert bad.status == "error"
    assert "UsageError" in bad.text() and "invalid choice: 'nosuch'" in bad.text()
    assert "No module named" not in bad.text()
