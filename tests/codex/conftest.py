"""Fixtures for the Codex driver tests: the real CLI, a private CODEX_HOME, the fake model server, and checks
that nothing reaches the network and no process outlives a test."""

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
from _support import require_cli

from adaptor_nb.drivers.codex import Config, Driver
from adaptor_nb.drivers.codex._home import provider_settings, write_codex_home
from adaptor_nb.testing import FakeOpenAIServer

API_KEY_ENV = "FAKE_OPENAI_API_KEY"
API_KEY = "sk-test-codex-secret-5f1e"
CATALOG_MODEL = "gpt-5.5"  # a model Codex knows: it declares apply_patch for it
_PR_SET_CHILD_SUBREAPER = 36


@pytest.fixture(scope="session")
def codex_bin() -> str:
    return require_cli("codex", "run scripts/setup.sh to put @openai/codex in .cache/npm")


class NetworkTripwire:
    """A local HTTP(S) proxy that accepts connections, records what was asked and answers nothing useful."""

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

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        env: dict[str, str] = {}
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            env[name] = env[name.lower()] = self.url
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
    assert wire.attempts == [], f"the Codex CLI tried to reach the network: {wire.attempts}"


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
                # A zombie already exited (its parent died before reaping it); it is only reaped here.
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
