"""Fixtures for the CodeBuddy Code tests: the real CLI from the pinned wheel, a private HOME, the fake Chat
Completions server, a proxy tripwire proving nothing leaves the machine, and a check that no process outlives a test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _support import NetworkTripwire, network_tripwire, no_leftover_processes

from adaptor_nb.drivers.codebuddy import Config, Driver
from adaptor_nb.testing import FakeChatCompletionsServer, find_cli

API_KEY = "sk-test-codebuddy-secret-7c2d"


@pytest.fixture(scope="session")
def codebuddy_bin() -> str:
    found = find_cli("codebuddy")
    if found is None:
        pytest.fail("CodeBuddy Code is missing: run scripts/setup.sh (it installs adaptor_nb[codebuddy])")
    return found


@pytest.fixture
def tripwire() -> Iterator[NetworkTripwire]:
    with network_tripwire("CodeBuddy Code") as wire:
        yield wire


@pytest.fixture(autouse=True, name="no_leftover_processes")
def _no_leftover_processes() -> Iterator[None]:
    with no_leftover_processes():
        yield


@pytest.fixture
async def fake() -> Any:
    async with FakeChatCompletionsServer() as server:
        yield server


DriverFactory = Callable[..., Driver]


@pytest.fixture
def make_driver(
    codebuddy_bin: str, home: Path, fake: FakeChatCompletionsServer, tripwire: NetworkTripwire
) -> DriverFactory:
    """A Driver on the real CLI with a private HOME, the fake's URL and no retries; keywords override Config."""

    def build(**fields: Any) -> Driver:
        env = {"HOME": str(home), "CODEBUDDY_BASE_URL": fake.url, "CODEBUDDY_MAX_RETRIES": "0", **tripwire.env()}
        env.update(fields.pop("env", {}))
        base: dict[str, Any] = {
            "command": [codebuddy_bin],
            "env": env,
            "secret_env": {"CODEBUDDY_API_KEY": API_KEY},
            "grace_period": 1.0,
        }
        base.update(fields)
        return Driver(Config(**base))

    return build
