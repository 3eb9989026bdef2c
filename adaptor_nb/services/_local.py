"""``LocalServices``: a ServiceManager that starts each service as a local command, waits for it to be ready and
stops it when the run ends."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .._errors import ConfigError
from ..mcp import HTTP
from ._specs import ServiceRef, ServiceRequest, ServiceSpec

STOP_GRACE = 5.0
_OUTPUT_TAIL = 2000


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class _Running:
    run_id: str
    spec: ServiceSpec
    process: asyncio.subprocess.Process
    labels: dict[str, str]
    output: list[str] = field(default_factory=list)
    drain: asyncio.Task[None] | None = None


class LocalServices:
    """Start every ``ServiceSpec`` with a ``command`` as a subprocess of this process (in its own process group).

    A spec is ready when a line of its output matches ``ready_line``, or when ``127.0.0.1:{port}`` accepts a
    connection (``ready_port=True``), or at once when it names neither. A service that exits or is not ready within
    ``ready_timeout`` fails ``ensure`` with its output tail (secret values blanked)."""

    def __init__(self) -> None:
        self._running: list[_Running] = []

    def __repr__(self) -> str:
        return f"LocalServices(running={len(self._running)})"

    def running(self) -> list[str]:
        """``run_id/name`` of the services started and not yet stopped."""
        return [f"{r.run_id}/{r.spec.name}" for r in self._running if r.process.returncode is None]

    async def ensure(self, request: ServiceRequest) -> Sequence[ServiceRef]:
        refs: list[ServiceRef] = []
        try:
            for spec in request.desired:
                refs.append(await self._start(request, spec))
        except BaseException:
            await self.release_by_run(request.run_id)
            raise
        return refs

    async def _start(self, request: ServiceRequest, spec: ServiceSpec) -> ServiceRef:
        port = _free_port()
        values = {"port": str(port), "workspace": request.workspace.path, "run": request.run_id}

        def fill(text: str) -> str:
            for key, value in values.items():
                text = text.replace("{" + key + "}", value)
            return text

        labels = {"run": request.run_id, "service": spec.name, **spec.labels}
        endpoint = fill(spec.endpoint) if spec.endpoint else f"127.0.0.1:{port}"
        values["endpoint"] = endpoint
        ref = ServiceRef(
            name=spec.name,
            endpoint=endpoint,
            mcp=(HTTP(name=spec.name, url=fill(spec.mcp_url)),) if spec.mcp_url else (),
            env={k: fill(v) for k, v in spec.client_env.items()},
            secret_env={k: fill(v) for k, v in spec.secret_env.items()},
            labels=labels,
        )
        if not spec.command:
            return ref
        env = {**os.environ, **{k: fill(v) for k, v in spec.env.items()}, **ref.secret_env}
        try:
            proc = await asyncio.create_subprocess_exec(
                *[fill(a) for a in spec.command],
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=env,
                cwd=request.workspace.path or None,
                start_new_session=True,
            )
        except OSError as exc:
            raise ConfigError(f"service {spec.name!r} could not start: {exc}", option="services") from None
        running = _Running(request.run_id, spec, proc, labels)
        self._running.append(running)
        ready = asyncio.get_running_loop().create_future()
        pattern = re.compile(spec.ready_line) if spec.ready_line else None
        running.drain = asyncio.get_running_loop().create_task(self._read(running, pattern, ready))
        if pattern is None and not spec.ready_port:
            ready.set_result(None)
        waiters: list[asyncio.Future[None] | asyncio.Task[None]] = [ready]
        if spec.ready_port:
            waiters = [asyncio.ensure_future(self._port_open(port, running))]
        try:
            await asyncio.wait_for(asyncio.gather(*waiters), spec.ready_timeout)
        except (TimeoutError, RuntimeError) as exc:
            tail = self._tail(running, ref)
            why = f"was not ready within {spec.ready_timeout:g} s" if isinstance(exc, TimeoutError) else str(exc)
            raise ConfigError(f"service {spec.name!r} {why}; output: {tail!r}", option="services") from None
        return ref

    @staticmethod
    def _tail(running: _Running, ref: ServiceRef) -> str:
        text = "".join(running.output)[-_OUTPUT_TAIL:]
        for value in ref.secret_env.values():
            if value:
                text = text.replace(value, "***")
        return text

    @staticmethod
    async def _read(running: _Running, pattern: re.Pattern[str] | None, ready: asyncio.Future[None]) -> None:
        assert running.process.stdout is not None
        while True:
            raw = await running.process.stdout.readline()
            if not raw:
                break
            line = raw.decode(errors="replace")
            running.output.append(line)
            del running.output[:-50]
            if pattern is not None and not ready.done() and pattern.search(line):
                ready.set_result(None)
        if not ready.done():
            code = await running.process.wait()
            ready.set_exception(RuntimeError(f"exited with code {code} before it was ready"))

    @staticmethod
    async def _port_open(port: int, running: _Running) -> None:
        delay = 0.01
        while True:
            if running.process.returncode is not None:
                raise RuntimeError(f"exited with code {running.process.returncode} before it was ready")
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(delay)  # a readiness poll of a foreign process, backing off
                delay = min(delay * 2, 0.2)
                continue
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
            return

    async def _stop(self, running: _Running) -> None:
        proc = running.process
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), STOP_GRACE)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
        if running.drain is not None:
            with contextlib.suppress(BaseException):
                await running.drain

    async def _stop_where(self, match: Mapping[str, str] | None, run_id: str | None) -> None:
        chosen = [
            r
            for r in self._running
            if (run_id is None or r.run_id == run_id)
            and (match is None or all(r.labels.get(k) == v for k, v in match.items()))
        ]
        self._running = [r for r in self._running if r not in chosen]
        await asyncio.gather(*(self._stop(r) for r in chosen))

    async def release_by_run(self, run_id: str) -> None:
        await self._stop_where(None, run_id)

    async def release_by_labels(self, labels: Mapping[str, str]) -> None:
        await self._stop_where(labels, None)
