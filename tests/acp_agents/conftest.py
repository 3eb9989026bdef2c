"""Fixtures for the ACP driver tests: the real agents (Qwen Code, codex-acp, CodeBuddy with --acp) against the
project's fake model servers on 127.0.0.1, a private HOME per test, and a check that no process outlives a test."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _support import NetworkTripwire, network_tripwire, no_leftover_processes

from adaptor_nb.drivers import acp
from adaptor_nb.testing import FakeChatCompletionsServer, find_cli

API_KEY = "sk-test-acp-secret-41b7"


def find_agent(name: str) -> str | None:
    """An agent binary from the project's npm cache, else PATH."""
    root = Path(__file__).resolve().parents[2] / ".cache" / "npm" / "node_modules" / ".bin" / name
    return str(root) if root.is_file() else shutil.which(name)


@pytest.fixture(scope="session")
def qwen_bin() -> str:
    found = find_agent("qwen")
    if found is None:
        pytest.fail("Qwen Code is missing: run scripts/setup.sh (it installs @qwen-code/qwen-code)")
    return found


@pytest.fixture(scope="session")
def codebuddy_bin() -> str:
    found = find_cli("codebuddy")
    if found is None:
        pytest.fail("CodeBuddy Code is missing: run scripts/setup.sh (it installs adaptor_nb[codebuddy])")
    return found


@pytest.fixture
def tripwire() -> Iterator[NetworkTripwire]:
    with network_tripwire("an ACP agent") as wire:
        yield wire


@pytest.fixture(autouse=True, name="no_leftover_processes")
def _no_leftover_processes() -> Iterator[None]:
    with no_leftover_processes():
        yield


@pytest.fixture
async def fake() -> Any:
    async with FakeChatCompletionsServer() as server:
        yield server


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def qwen_config(qwen: str, home: Path, url: str, wire: NetworkTripwire, **fields: Any) -> acp.Config:
    """Qwen Code on the fake Chat Completions server with a private HOME and no retries of a failed request."""
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"model": {"generationConfig": {"maxRetries": 0}}}))
    env = {"HOME": str(home), **wire.env()}
    env.update(fields.pop("env", {}))
    secret = fields.pop("secret_env", {"OPENAI_API_KEY": API_KEY})
    return acp.preset(
        "qwen",
        command=[qwen, "--acp"],
        extra_args=["--auth-type", "openai", "--openai-base-url", url, "--model", "fake-model"],
        env=env,
        secret_env=secret,
        grace_period=1.0,
        startup_timeout=60.0,
        **fields,
    )


DriverFactory = Callable[..., acp.Driver]


@pytest.fixture
def make_qwen(qwen_bin: str, home: Path, fake: FakeChatCompletionsServer, tripwire: NetworkTripwire) -> DriverFactory:
    def build(**fields: Any) -> acp.Driver:
        return acp.Driver(qwen_config(qwen_bin, home, fake.url, tripwire, **fields))

    return build
