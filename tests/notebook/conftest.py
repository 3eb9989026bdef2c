"""Fixtures for the notebook tests: a real kernel with the extension's environment, and a fresh store per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .kernel import Kernel


@pytest.fixture
def notebook_env(tmp_path: Path) -> dict[str, str]:
    """Pin the offline driver and give each test its own thread store."""
    return {
        "ADAPTOR_NB_DRIVER": "reference",
        "ADAPTOR_NB_THREAD_STORE": str(tmp_path / "threads.adaptor_nb.sqlite"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "ADAPTOR_NB_LIVE_VIEW": "1",  # these kernels stand in for a front end: they read and click the live view
    }


@pytest.fixture
def kernel(tmp_path: Path, notebook_env: dict[str, str]) -> Iterator[Kernel]:
    """A kernel with ``%load_ext adaptor_nb`` done; it is shut down (and checked gone) afterwards."""
    k = Kernel(tmp_path, notebook_env)
    try:
        k.run_ok("%load_ext adaptor_nb")
        yield k
    finally:
        k.shutdown()
        assert not k.km.is_alive()


CLI_BIN = Path(__file__).resolve().parents[2] / ".cache" / "npm" / "node_modules" / ".bin"


@pytest.fixture
def spied(tmp_path: Path) -> Iterator[tuple[Kernel, Path]]:
    """A kernel with no key of any kind and an empty HOME, whose ``claude`` and ``codex`` commands note every start
    in a log before running the real CLI."""
    home = tmp_path / "home"
    home.mkdir()
    spy = tmp_path / "spy"
    spy.mkdir()
    log = tmp_path / "started.log"
    for name in ("claude", "codex"):
        script = spy / name
        script.write_text(f'#!/bin/sh\necho "{name} $*" >> {log}\nexec {CLI_BIN / name} "$@"\n')
        script.chmod(0o755)
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
        "PATH": f"{spy}{os.pathsep}{os.environ.get('PATH', '')}",
        "ADAPTOR_NB_THREAD_STORE": str(tmp_path / "threads.adaptor_nb.sqlite"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    k = Kernel(tmp_path, env)
    try:
        k.run_ok("%load_ext adaptor_nb")
        yield k, log
    finally:
        k.shutdown()
        assert not k.km.is_alive()
