"""Fixtures for the Codex driver tests: the real CLI, a private CODEX_HOME, the fake model server, and checks
that nothing reaches the network and no process outlives a test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _support import NetworkTripwire, network_tripwire, no_leftover_processes, require_cli

from adaptor_nb.drivers.codex import Config, Driver
from adaptor_nb.drivers.codex._home import provider_settings, write_codex_home
from adaptor_nb.testing import FakeOpenAIServer

API_KEY_ENV = "FAKE_OPENAI_API_KEY"
API_KEY = "sk-test-codex-secret-5f1e"
CATALOG_MODEL = "gpt-5.5"  # a model Codex knows: it declares apply_patch for it


@pytest.fixture(scope="session")
def codex_bin() -> str:
    return require_cli("codex", "run scripts/setup.sh to put @openai/codex in .cache/npm")


@pytest.fixture
def tripwire() -> Iterator[NetworkTripwire]:
    with network_tripwire("the Codex CLI") as wire:
        yield wire


@pytest.fixture(autouse=True, name="no_leftover_processes")
def _no_leftover_processes() -> Iterator[None]:
    with no_leftover_processes():
        yield


@pytest.fixture
async def fake() -> Any:
    async with FakeOpenAIServer() as server:
        yield server


def make_home(
    path: Path,
    server: FakeOpenAIServer,
    *,
    model: str = "gpt-fake",
    settings: dict[str, Any] | None = None,
) -> Path:
    """A private CODEX_HOME whose config points at ``server`` with retries off and background traffic off."""
    config = provider_settings(
        base_url=server.base_url, model=model, env_key=API_KEY_ENV, request_max_retries=0, stream_max_retries=0
    )
    config.update(settings or {})
    return write_codex_home(path, config)


@pytest.fixture
def codex_home(tmp_path: Path, fake: FakeOpenAIServer) -> Path:
    return make_home(tmp_path / "codex-home", fake)


DriverFactory = Callable[..., Driver]


@pytest.fixture
def make_driver(codex_bin: str, codex_home: Path, home: Path, tripwire: NetworkTripwire) -> DriverFactory:
    """Builds a Driver on the real CLI with an isolated CODEX_HOME and HOME; keyword arguments override Config."""

    def build(**fields: Any) -> Driver:
        env = {"HOME": str(home), **tripwire.env(), **fields.pop("env", {})}
        base: dict[str, Any] = {
            "command": [codex_bin],
            "codex_home": str(codex_home),
            "env": env,
            "secret_env": {API_KEY_ENV: API_KEY},
            "grace_period": 1.0,
        }
        base.update(fields)
        return Driver(Config(**base))

    return build
