"""Fixtures for the stand-in CLI tests: no process may outlive a test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _support import no_leftover_processes


@pytest.fixture(autouse=True, name="no_leftover_processes")
def _no_leftover_processes() -> Iterator[None]:
    with no_leftover_processes():
        yield
