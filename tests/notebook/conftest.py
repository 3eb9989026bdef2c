"""Fixtures for the notebook tests: a real kernel with the extension's environment, and a fresh store per test."""

from __future__ import annotations

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
