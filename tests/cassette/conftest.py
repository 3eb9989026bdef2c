"""Fixtures for cassette tests: the real CLIs against the fake model servers, and a private HOME."""

from __future__ import annotations

import os
from collections.abc import Iterator

import psutil
import pytest

from adaptor_nb import cassette


def _children() -> list[psutil.Process]:
    try:
        return psutil.Process(os.getpid()).children(recursive=True)
    except psutil.Error:
        return []


@pytest.fixture(autouse=True)
def no_process_left_behind() -> Iterator[None]:
    """Every process a test starts (CLIs, recorders, players) is gone when it ends."""
    before = {p.pid for p in _children()}
    yield
    left = []
    for p in _children():
        if p.pid in before:
            continue
        try:
            left.append(f"{p.pid} {p.status()} {' '.join(p.cmdline()[:3])}")
        except psutil.Error:
            continue
    assert not left, f"processes left behind: {left}"


@pytest.fixture(autouse=True)
def no_cassette_left_active() -> Iterator[None]:
    yield
    cassette.stop()
