"""A Claude-family CLI's ``--version`` answer is kept on disk per binary: a new process does not ask it again, a
changed binary is asked again, and an empty answer is not kept."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from adaptor_nb.drivers import claude, codebuddy


def fake_cli(path: Path, answer: str) -> Path:
    """A CLI that answers ``--version`` with ``answer`` and counts how often it was asked."""
    count = path.with_suffix(".count")
    path.write_text(f"#!{sys.executable}\nimport sys\nopen({str(count)!r}, 'a').write('x')\nprint({answer!r})\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return count


def asked(count: Path) -> int:
    return len(count.read_text()) if count.exists() else 0


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv("ADAPTOR_NB_CACHE_DIR", str(where))
    return where


async def test_a_second_driver_reads_the_kept_answer_and_a_changed_binary_is_asked_again(tmp_path: Path) -> None:
    cli = tmp_path / "claude-fake"
    count = fake_cli(cli, "9.9.9 (Claude Code)")
    first = await claude.Driver(claude.Config(command=[str(cli)])).probe_environment()
    again = await claude.Driver(claude.Config(command=[str(cli)])).probe_environment()
    assert first.version == again.version == "9.9.9"
    assert [c.detail for c in first.checks if c.name == "version"] == ["9.9.9 (Claude Code)"]
    assert [c.detail for c in again.checks if c.name == "version"] == ["9.9.9 (Claude Code)"]
    assert asked(count) == 1
    fake_cli(cli, "10.0.0 (Claude Code)")  # a new binary in the same place: its size and mtime differ
    st = cli.stat()
    os.utime(cli, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    updated = await claude.Driver(claude.Config(command=[str(cli)])).probe_environment()
    assert updated.version == "10.0.0" and asked(count) == 2


async def test_an_empty_answer_is_asked_again(tmp_path: Path, cache_dir: Path) -> None:
    cli = tmp_path / "codebuddy-fake"
    count = fake_cli(cli, "")
    for _ in range(2):
        report = await codebuddy.Driver(codebuddy.Config(command=[str(cli)])).probe_environment()
        assert report.version == ""
    assert asked(count) == 2
    assert not (cache_dir / "cli-versions.json").exists()
