"""find_cli: the project-local npm cache first, then PATH; for codex the native binary."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest

from adaptor_nb.testing import find_cli


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_the_cache_named_by_the_environment_wins(tmp_path: Path, monkeypatch) -> None:
    claude = executable(tmp_path / "cache" / "node_modules" / ".bin" / "claude")
    monkeypatch.setenv("ADAPTOR_NB_CLI_CACHE", str(tmp_path / "cache"))
    assert find_cli("claude") == str(claude)


@pytest.mark.skipif(platform.machine() != "x86_64" or platform.system() != "Linux", reason="path is for x86_64 Linux")
def test_codex_is_the_native_binary_not_the_launcher(tmp_path: Path, monkeypatch) -> None:
    nm = tmp_path / "cache" / "node_modules"
    executable(nm / ".bin" / "codex")
    native = executable(nm / "@openai" / "codex-linux-x64" / "vendor" / "x86_64-unknown-linux-musl" / "bin" / "codex")
    monkeypatch.setenv("ADAPTOR_NB_CLI_CACHE", str(tmp_path / "cache"))
    assert find_cli("codex") == str(native)


def test_path_is_the_fallback_and_absence_is_none(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ADAPTOR_NB_CLI_CACHE", str(tmp_path / "empty"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("adaptor_nb.testing._clis.cli_cache_dirs", lambda: [tmp_path / "empty"])
    bin_dir = tmp_path / "bin"
    claude = executable(bin_dir / "claude")
    monkeypatch.setenv("PATH", str(bin_dir))
    assert find_cli("claude") == str(claude)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert find_cli("claude") is None
    with pytest.raises(ValueError):
        find_cli("cursor")


def test_the_repository_cache_is_found_from_a_subdirectory(monkeypatch) -> None:
    repo = Path(__file__).resolve().parents[2]
    if not (repo / ".cache" / "npm" / "node_modules" / ".bin" / "claude").exists():
        pytest.skip("the pinned CLIs are not installed in this checkout (run scripts/setup.sh)")
    monkeypatch.delenv("ADAPTOR_NB_CLI_CACHE", raising=False)
    monkeypatch.chdir(repo / "tests")
    found = find_cli("claude")
    assert found is not None and os.path.realpath(found).startswith(str(repo / ".cache" / "npm"))
