"""Fixtures for the CodeBuddy Code tests: the real CLI from the pinned wheel, a private HOME, the fake Chat
Completions server, a proxy tripwire proving nothing leaves the machine, and a check that no process outlives a test."""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from adaptor_nb.drivers.codebuddy import Config, Driver
from adaptor_nb.testing import FakeChatCompletionsServer, find_cli

API_KEY = "sk-test-codebuddy-secret-7c2d"
_PR_SET_CHILD_SUBREAPER = 36


@pytest.fixture(scope="session")
def codebuddy_bin() -> str:
    found = find_cli("codebuddy")
    if found is None:
        pytest.fail("CodeBuddy Code is missing: run scripts/setup.sh (it installs adaptor_nb[codebuddy])")
    return found


class NetworkTripwire:
    """A local HTTP(S) proxy that records every connection the CLI tries to make and answers 403."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.attempts: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1.0)
                try:
                    head = conn.recv(512)
                except OSError:
                    head = b""
                self.attempts.append(head.split(b"\r\n", 1)[0])
                try:
                    conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                except OSError:
                    pass

    def env(self) -> dict[str, str]:
        url = f"http://127.0.0.1:{self.port}"
        env: dict[str, str] = {}
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            env[name] = env[name.lower()] = url
        env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
        return env

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


@pytest.fixture
def tripwire() -> Iterator[NetworkTripwire]:
    wire = NetworkTripwire()
    yield wire
    wire.close()
    assert wire.attempts == [], f"CodeBuddy Code tried to reach the network: {wire.attempts}"


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    """Orphans are re-parented to this process while the test runs, so every process it started is visible."""
    libc = ctypes.CDLL(None) if sys.platform == "linux" else None
    if libc is not None:
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    try:
        yield
    finally:
        leftovers = [p for p in me.children(recursive=True) if p.pid not in before]
        described = []
        for p in leftovers:
            try:
                if p.status() != psutil.STATUS_ZOMBIE:
                    described.append(f"{p.pid} {p.name()} {p.cmdline()[:3]}")
                    os.kill(p.pid, signal.SIGKILL)
            except (psutil.Error, ProcessLookupError):
                pass
        for p in leftovers:
            try:
                os.waitpid(p.pid, 0)
            except ChildProcessError:
                pass
        if libc is not None:
            libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
        assert not described, f"processes outlived the test: {described}"


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
