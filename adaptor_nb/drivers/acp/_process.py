"""One ACP agent process: spawn, the SDK's client-side connection over its stdio, ``initialize``, the open session,
the client methods the agent calls, and bounded close."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...driver import CLIProcess, DriverFailure, FailureReason, RunContext
from ._sdk import sdk
from ._transport import LineTransport

PROTOCOL_VERSION = 1
CLIENT_NAME = "adaptor_nb"


def wire(model: Any) -> Any:
    """An SDK model as its JSON-RPC wire form (camelCase, no nulls); other values unchanged."""
    dump = getattr(model, "model_dump", None)
    return dump(mode="json", by_alias=True, exclude_none=True) if dump is not None else model


@dataclass
class Inbound:
    """One thing from the agent for the run: a session update, a permission request (answered through ``reply``)
    or the end of the prompt request (``kind == "done"``)."""

    kind: str
    params: dict[str, Any] = field(default_factory=dict)
    reply: asyncio.Future[dict[str, Any]] | None = None


class AgentClient:
    """The client side the SDK calls: session updates and permission requests go on ``inbound`` for the run using
    the process; while the process is parked, updates are dropped and permission requests cancelled."""

    def __init__(self) -> None:
        self.inbound: asyncio.Queue[Inbound] | None = None
        self.ctx: RunContext | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if self.inbound is not None:  # queued synchronously: notifications keep their wire order
            self.inbound.put_nowait(Inbound("update", wire(update)))

    async def request_permission(self, options: Any, session_id: str, tool_call: Any, **kwargs: Any) -> Any:
        params = {"sessionId": session_id, "options": [wire(o) for o in options], "toolCall": wire(tool_call)}
        outcome: dict[str, Any] = {"outcome": "cancelled"}
        if self.inbound is not None:
            reply: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            self.inbound.put_nowait(Inbound("permission", params, reply))
            outcome = await reply
        return sdk().RequestPermissionResponse.model_validate({"outcome": outcome})

    # The client capabilities decline files and terminals: an agent that asks anyway gets an error it can read
    # (the run is told, with the path or command asked for), and nothing is read, written or run.

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> Any:
        raise self._declined("fs/read_text_file", path)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        raise self._declined("fs/write_text_file", path)

    async def create_terminal(self, session_id: str, command: str, **kwargs: Any) -> Any:
        raise self._declined("terminal/create", command)

    def _declined(self, method: str, target: str) -> Exception:
        if self.inbound is not None:
            self.inbound.put_nowait(Inbound("declined", {"method": method, "target": target}))
        details = f"this client declines {method} (its clientCapabilities do not offer it); use your own tools"
        error: Exception = sdk().RequestError(-32601, "Method not found", {"method": method, "details": details})
        return error

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        return None

    def raw_line(self, line: bytes) -> None:
        """Every line from the agent goes to the run's raw stdout capture."""
        if self.ctx is not None:
            self.ctx.raw_stdout(line + b"\n")

    def garbage(self, line: bytes) -> None:
        """A line that is not JSON-RPC: reported to the run using the process (skipped while parked)."""
        if self.inbound is not None:
            self.inbound.put_nowait(Inbound("garbage", {"line": line[:4096].decode("utf-8", "replace")}))

    def extension(self, method: str, params: Any) -> None:
        """A notification outside ACP (an agent's own extension): nothing for the run, and no error."""
        return None


class AgentProcess:
    """A running ACP agent and the session it holds for one adaptor Thread (or one direct send)."""

    def __init__(self, proc: CLIProcess, conn: Any, client: AgentClient, init: dict[str, Any]) -> None:
        self.proc = proc
        self.conn = conn
        self.client = client
        self.init = init
        self.session_id = ""
        self.session: dict[str, Any] = {}
        self.prompted = False
        self.model = ""
        self.transport: LineTransport | None = None
        self.servers = 0  # the key of the MCP servers its session was opened with

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None,
        timeout: float,
        on_stderr: Any,
        version: str,
        max_line: int | None = None,
    ) -> AgentProcess:
        """Start the agent and complete ``initialize`` within ``timeout`` seconds (a clear failure otherwise)."""
        acp = sdk()
        proc = await CLIProcess.start(list(argv), cwd=cwd, env=env, on_stderr=on_stderr, max_line=max_line)
        client = AgentClient()
        conn = None
        transport = LineTransport(
            proc, on_line=client.raw_line, on_garbage=client.garbage, on_extension=client.extension
        )
        try:
            conn = acp.connect_to_agent(client, transport)
            caps = acp.schema.ClientCapabilities(
                fs=acp.schema.FileSystemCapabilities(read_text_file=False, write_text_file=False), terminal=False
            )
            info = acp.schema.Implementation(name=CLIENT_NAME, title="adaptor_nb", version=version)
            waiting = asyncio.ensure_future(
                conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps, client_info=info)
            )
            exited = asyncio.ensure_future(proc.proc.wait())
            try:
                done, _ = await asyncio.wait({waiting, exited}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            finally:
                exited.cancel()
            if waiting not in done:
                waiting.cancel()
                with contextlib.suppress(BaseException):
                    await waiting
                if exited in done:
                    raise DriverFailure(
                        f"the ACP agent {argv[0]!r} exited before answering initialize (exit code {proc.returncode})",
                        reason=FailureReason.INFRASTRUCTURE,
                        details={"exit_code": proc.returncode, "stderr_tail": await _tail(proc)},
                    )
                raise DriverFailure(
                    f"the ACP agent {argv[0]!r} did not answer initialize within {timeout:g} s "
                    "(Config.startup_timeout)",
                    details={"stderr_tail": await _tail(proc)},
                    retryable=True,
                )
            try:
                result = waiting.result()
            except Exception as exc:
                raise DriverFailure(
                    f"the ACP agent {argv[0]!r} refused initialize: {exc}", details={"stderr_tail": await _tail(proc)}
                ) from None
            init = wire(result)
            if init.get("protocolVersion") != PROTOCOL_VERSION:
                raise DriverFailure(
                    f"the ACP agent {argv[0]!r} speaks protocol version {init.get('protocolVersion')!r}; this client "
                    f"speaks version {PROTOCOL_VERSION}",
                    details={"initialize": init},
                )
        except BaseException:
            if conn is not None:
                with contextlib.suppress(Exception):
                    await conn.close()
            await proc.close(grace=0.2, term_wait=1.0)
            raise
        agent = cls(proc, conn, client, init)
        agent.transport = transport
        return agent

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc.alive and not self.proc.has_exited()

    @property
    def agent_info(self) -> dict[str, Any]:
        info = self.init.get("agentInfo")
        return info if isinstance(info, dict) else {}

    @property
    def can_load(self) -> bool:
        caps = self.init.get("agentCapabilities")
        return isinstance(caps, dict) and bool(caps.get("loadSession"))

    @property
    def takes_images(self) -> bool:
        """The agent advertised ``promptCapabilities.image`` in its ``initialize`` answer."""
        caps = self.init.get("agentCapabilities")
        prompt = caps.get("promptCapabilities") if isinstance(caps, dict) else None
        return isinstance(prompt, dict) and bool(prompt.get("image"))

    @property
    def auth_methods(self) -> list[str]:
        methods = self.init.get("authMethods") or []
        return [str(m.get("name") or m.get("id")) for m in methods if isinstance(m, dict)]

    def attach(self, ctx: RunContext | None, inbound: asyncio.Queue[Inbound] | None) -> None:
        self.client.ctx = ctx
        self.client.inbound = inbound

    async def close(self, grace: float = 2.0) -> int | None:
        """Close the connection and stdin, then escalate to SIGTERM/SIGKILL on the process group."""
        self.attach(None, None)
        try:
            return await self.proc.close(grace=grace)
        finally:
            with contextlib.suppress(Exception):
                await self.conn.close()


async def _tail(proc: CLIProcess) -> str:
    await proc.wait_stderr(0.5)
    return proc.stderr_tail()


__all__ = ["PROTOCOL_VERSION", "AgentClient", "AgentProcess", "Inbound", "wire"]
