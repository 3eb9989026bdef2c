"""One ``codex app-server`` process: spawn, handshake, the loaded thread, raw-output routing and bounded close."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from ...driver import (
    CLIProcess,
    RunContext,
)
from ._rpc import Inbound, RpcClient, ServerClosedError, Wakeup

# Notifications the driver never uses; opting out saves parsing on every turn.
OPTED_OUT_NOTIFICATIONS = ("account/rateLimits/updated", "remoteControl/status/changed", "thread/started")


class OutputRoute:
    """Sends the process's raw stdout lines and stderr chunks to the run currently using it (none when parked).

    Stderr chunks also go on the inbound queue, so the run publishes them in order with everything else.
    """

    def __init__(self) -> None:
        self.ctx: RunContext | None = None
        self.inbound: asyncio.Queue[Inbound] | None = None

    def stdout(self, line: bytes) -> None:
        if self.ctx is not None:
            self.ctx.raw_stdout(line + b"\n")

    def stderr(self, chunk: bytes) -> None:
        if self.ctx is not None:
            self.ctx.raw_stderr(chunk)
            if self.inbound is not None:
                self.inbound.put_nowait(Wakeup("stderr", chunk))


class AppServer:
    """A running app-server and the Codex thread it has loaded for one adaptor Thread (or one direct send)."""

    def __init__(self, proc: CLIProcess, rpc: RpcClient, route: OutputRoute, user_agent: str) -> None:
        self.proc = proc
        self.rpc = rpc
        self.route = route
        self.user_agent = user_agent
        self.thread_id = ""
        self.thread: dict[str, Any] = {}
        self.defaults: dict[str, Any] = {}
        self.applied: dict[str, Any] = {}
        self.exit_reported = False

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None,
        client_name: str,
        client_version: str,
        startup_timeout: float,
        route: OutputRoute,
        grace: float = 2.0,
        max_line: int | None = None,
    ) -> AppServer:
        """Start the process and complete ``initialize`` / ``initialized`` within ``startup_timeout`` seconds."""
        proc = await CLIProcess.start(list(argv), cwd=cwd, env=env, on_stderr=route.stderr, max_line=max_line)
        rpc = RpcClient(proc, on_stdout=route.stdout)
        route.inbound = rpc.inbound
        rpc.start()
        try:
            params = {
                "clientInfo": {"name": client_name, "title": None, "version": client_version},
                "capabilities": {"experimentalApi": False, "optOutNotificationMethods": list(OPTED_OUT_NOTIFICATIONS)},
            }
            result = await rpc.request("initialize", params, timeout=startup_timeout)
            await rpc.notify("initialized")
        except BaseException:
            await rpc.aclose()
            await proc.close(grace=0.2, term_wait=grace)
            raise
        agent = str(result.get("userAgent", "")) if isinstance(result, dict) else ""
        return cls(proc, rpc, route, agent)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc.alive and not self.rpc.eof and not self.proc.has_exited()

    def adopt_thread(self, result: Any) -> str:
        """Remember the thread of a ``thread/start|resume|fork`` result and the defaults it reports."""
        if not isinstance(result, dict) or not isinstance(result.get("thread"), dict):
            raise ServerClosedError(self.proc.returncode, "thread response without a thread")
        self.thread = result["thread"]
        self.thread_id = str(self.thread.get("id", ""))
        self.defaults = {k: result.get(k) for k in ("model", "modelProvider", "approvalPolicy", "sandbox", "cwd")}
        self.applied = {
            "model": result.get("model"),
            "sandboxPolicy": result.get("sandbox"),
            "approvalPolicy": result.get("approvalPolicy"),
        }
        return self.thread_id

    def changed_settings(self, wanted: dict[str, Any]) -> dict[str, Any]:
        """The turn settings in ``wanted`` that differ from what the thread already holds (they persist)."""
        return {k: v for k, v in wanted.items() if self.applied.get(k) != v}

    def drain_stale(self) -> list[Any]:
        """Take whatever arrived while no run was attached (late notifications, EOF)."""
        stale: list[Any] = []
        while True:
            try:
                stale.append(self.rpc.inbound.get_nowait())
            except asyncio.QueueEmpty:
                return stale

    async def close(self, grace: float = 2.0) -> int | None:
        """Close stdin (app-server exits at once), then escalate to SIGTERM/SIGKILL on the process group."""
        self.route.ctx = None
        try:
            return await self.proc.close(grace=grace)
        finally:
            with contextlib.suppress(Exception):
                await self.rpc.aclose()
