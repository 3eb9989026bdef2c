"""Fixtures for the Claude Code driver tests: the real CLI, a private HOME, the fake Anthropic server."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil
import pytest
from _support import require_cli

from adaptor_nb import Agent
from adaptor_nb.drivers import claude
from adaptor_nb.testing._anthropic import FakeAnthropicServer

HERE = Path(__file__).parent
FIXTURES = HERE.parent / "fixtures" / "claude"
FAULT_CLI = str(HERE / "fault_cli.py")
SECRET = "sk-ant-test-secret-0123456789abcdef"

# The environment the guide recommends for offline runs: no update checks, telemetry or background traffic.
QUIET_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_MAX_RETRIES": "0",
}


@pytest.fixture(scope="session")
def claude_cli() -> str:
    """The pinned Claude Code binary; tests that need it skip (with the reason) only when it is not installed."""
    return require_cli(
        "claude",
        "run `bash scripts/setup.sh` (installs @anthropic-ai/claude-code into .cache/npm) or set ADAPTOR_NB_CLI_CACHE",
    )


@pytest.fixture
def fake() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
def make_config(
    claude_cli: str, fake: FakeAnthropicServer, home: Path, workspace: Path
) -> Callable[..., claude.Config]:
    """A Config that runs the real CLI offline against the fake server, with a private HOME."""

    def build(**fields: Any) -> claude.Config:
        env = {"HOME": str(home), "ANTHROPIC_BASE_URL": fake.url, **QUIET_ENV}
        env.update(fields.pop("env", {}))
        base = claude.Config(
            command=fields.pop("command", [claude_cli]),
            cwd=str(workspace),
            env=env,
            secret_env={"ANTHROPIC_API_KEY": SECRET},
            bare=fields.pop("bare", True),
            startup_timeout=30.0,
            grace_period=1.0,
        )
        return replace(base, **fields)

    return build


@pytest.fixture
async def agent_factory(make_config: Callable[..., claude.Config], workspace: Path) -> AsyncIterator[Any]:
    """Build Agents on the Claude driver; every one is closed at the end of the test."""
    agents: list[Agent] = []

    def build(config: claude.Config | None = None, **options: Any) -> Agent:
        options.setdefault("workspace", str(workspace))
        a = Agent(claude.Driver(config or make_config()), **options)
        agents.append(a)
        return a

    yield build
    for a in agents:
        await a.close()


def _children() -> list[psutil.Process]:
    try:
        return psutil.Process(os.getpid()).children(recursive=True)
    except psutil.Error:
        return []


@pytest.fixture(autouse=True)
def no_process_left_behind() -> Iterator[None]:
    """Every process a test starts is gone when it ends (zombies count as left behind)."""
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


def python_cli(*args: str) -> list[str]:
    """argv prefix running a Python helper with this interpreter."""
    return [sys.executable, *args]
