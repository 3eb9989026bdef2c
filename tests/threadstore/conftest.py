"""Fixtures for the thread store tests: fresh database files and worker processes that are always reaped."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from adaptor_nb.threadstore import PostgresStore, SQLiteStore

from .pg_cluster import Cluster

HERE = Path(__file__).parent
WORKER = HERE / "store_worker.py"
READ_TIMEOUT = 60.0


class Worker:
    """One store_worker.py process: JSON lines out, plain lines in."""

    def __init__(self, *args: str, script: Path = WORKER, prefix: tuple[str, ...] = ()) -> None:
        self.proc = subprocess.Popen(
            [*prefix, sys.executable, str(script), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        # A reader thread hands over whole lines, so no report waits in a buffer a select() cannot see.
        self._lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put("")

    def read(self, timeout: float = READ_TIMEOUT) -> dict[str, Any]:
        """The next report; fails with the worker's stderr if none arrives in time or the worker died."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"worker {self.pid} sent nothing for {timeout}s") from None
        if not line:
            raise AssertionError(f"worker {self.pid} ended (rc={self.proc.wait()}): {self.stderr()}")
        report: dict[str, Any] = json.loads(line)
        return report

    def read_until(self, event: str) -> dict[str, Any]:
        while True:
            report = self.read()
            if report.get("event") == event:
                return report

    def send(self, line: str = "go") -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def kill9(self) -> int:
        """SIGKILL the worker and reap it; returns its exit status."""
        os.kill(self.proc.pid, signal.SIGKILL)
        return self.proc.wait(timeout=READ_TIMEOUT)

    def finish(self) -> None:
        """Wait for a clean exit (stdin closed first), failing with stderr if the worker failed."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        rc = self.proc.wait(timeout=READ_TIMEOUT)
        assert rc == 0, f"worker {self.pid} exited with {rc}: {self.stderr()}"

    def stderr(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return "(still running)"
        return self.proc.stderr.read()[-4000:]

    def reap(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=READ_TIMEOUT)
        self._reader.join(timeout=READ_TIMEOUT)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def workers() -> Iterator[Callable[..., Worker]]:
    """Start worker processes; every one is killed and reaped when the test ends."""
    started: list[Worker] = []

    def start(*args: str, **kwargs: Any) -> Worker:
        worker = Worker(*args, **kwargs)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.reap()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "threads.adaptor_nb.sqlite"


@pytest.fixture
def sqlite_factory(tmp_path: Path) -> Iterator[Callable[[], SQLiteStore]]:
    """Fresh SQLite stores, each on its own file, closed at the end of the test."""
    made: list[SQLiteStore] = []

    def make() -> SQLiteStore:
        store = SQLiteStore(tmp_path / f"{uuid.uuid4().hex}.sqlite")
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """One throwaway PostgreSQL server for the whole session (fails, naming the package, if it is not installed)."""
    cluster = Cluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.remove()


@pytest.fixture
def pg_factory(pg_cluster: Cluster) -> Callable[..., PostgresStore]:
    """Fresh Postgres stores, each in a schema of its own on the session's server (closed by their users)."""

    def make(**kwargs: Any) -> PostgresStore:
        kwargs.setdefault("schema", f"t_{uuid.uuid4().hex}")
        return PostgresStore(pg_cluster.dsn(), **kwargs)

    return make
