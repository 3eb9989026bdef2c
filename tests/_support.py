"""Helpers shared by every test folder: draining a stream, picking events by type, a stub for drivers written in a
test, locating a pinned CLI, a proxy tripwire proving nothing leaves the machine and a check that no process outlives
a test."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from typing import Any, TypeVar

import psutil
import pytest
from hypothesis import strategies as st

from adaptor_nb import AdaptorError, Event, Result
from adaptor_nb.driver import Descriptor
from adaptor_nb.testing import find_cli

E = TypeVar("E", bound=Event)


class StubDriver:
    """The bookkeeping half of a driver written for one test: its name, descriptor and configuration checks.
    Subclasses set ``name`` and write ``run``."""

    name = "stub"

    def descriptor(self) -> Descriptor:
        return Descriptor(name=self.name, provider="test")

    def validate_config(self) -> None:
        return None

    def config_fingerprint(self) -> str:
        return self.name


async def drain(stream: Any) -> tuple[list[Event], Result | None, BaseException | None]:
    """All events of a stream, then its result or error."""
    events = [ev async for ev in stream.events()]
    try:
        return events, await stream.result(), None
    except AdaptorError as exc:
        return events, None, exc


async def outcome(stream: Any) -> tuple[Result | None, BaseException | None]:
    """The result or error of a stream whose events were already consumed."""
    try:
        return await stream.result(), None
    except AdaptorError as exc:
        return None, exc


def of(events: list[Event], kind: type[E]) -> list[E]:
    """The events of one type, in order."""
    return [e for e in events if isinstance(e, kind)]


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def require_cli(name: str, how_to_install: str) -> str:
    """The pinned CLI ``name``; the test skips, saying how to install it, when it is not installed."""
    path: str | None = find_cli(name)
    if path is None:
        pytest.skip(f"the {name} CLI is not installed: {how_to_install}")
    return path


_PR_SET_CHILD_SUBREAPER = 36


class NetworkTripwire:
    """A local HTTP(S) proxy that accepts connections, records what was asked and answers 403."""

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
                with contextlib.suppress(OSError):
                    conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """Proxy variables that send every outside request to the tripwire (loopback stays direct)."""
        env: dict[str, str] = {}
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            env[name] = env[name.lower()] = self.url
        env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
        return env

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


@contextlib.contextmanager
def network_tripwire(who: str) -> Iterator[NetworkTripwire]:
    """A tripwire for the block; fails, naming ``who``, when anything tried to reach the network through it."""
    wire = NetworkTripwire()
    try:
        yield wire
    finally:
        wire.close()
    assert wire.attempts == [], f"{who} tried to reach the network: {wire.attempts}"


@contextlib.contextmanager
def no_leftover_processes() -> Iterator[None]:
    """Fails when a process started inside the block is still running at its end (and kills it).

    This process becomes a child subreaper meanwhile, so orphans are re-parented to it and stay visible.
    """
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
            with contextlib.suppress(ChildProcessError):
                os.waitpid(p.pid, 0)
        if libc is not None:
            libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
    assert not described, f"processes outlived the test: {described}"


def ends_its_loop(driver: str) -> str:
    """A script that sends once on a Thread of ``adaptor_nb.drivers.<driver>`` under ``asyncio.run`` and never
    closes the Agent, so the loop ends with the Thread's process parked. argv: the Config's fields as JSON and the
    workspace. It prints the CLI's pid, then ``returned`` once ``asyncio.run`` came back."""
    return f"""
import asyncio, json, sys
from adaptor_nb import Agent, ProcessInfo, ProcessKind
from adaptor_nb.drivers import {driver} as driver

agent = Agent(driver.Driver(driver.Config(**json.loads(sys.argv[1]))), workspace=sys.argv[2])

async def main() -> None:
    async for event in agent.thread("parked").send("[[say parked]]").events():
        if isinstance(event, ProcessInfo) and event.kind is ProcessKind.SPAWN:
            print(event.data["pid"], flush=True)

asyncio.run(main())
print("returned", flush=True)
"""


# Any JSON value json.dumps writes (no NaN), nested a few levels: for decoders that must agree with json.loads.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
