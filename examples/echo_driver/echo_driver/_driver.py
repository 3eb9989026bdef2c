"""The echo driver: runs ``echo_cli.py`` once per run and turns its JSON lines into adaptor_nb events.

It is built only on ``adaptor_nb.driver`` (the Driver SPI and everything a driver needs) and public ``adaptor_nb``
names, like any third-party driver.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from adaptor_nb.driver import (
    CLIProcess,
    Descriptor,
    DriverFailure,
    DriverOutcome,
    EnvironmentCheck,
    EnvironmentReport,
    EnvironmentStatus,
    InvalidDriverConfigError,
    Invocation,
    ProcessInfo,
    ProcessKind,
    RunContext,
    TextDelta,
    TranscriptItem,
    Usage,
    capture_output,
)

CLI = os.path.join(os.path.dirname(os.path.abspath(__file__)), "echo_cli.py")
Gate = Callable[[Invocation], Awaitable[None]]


@dataclass(frozen=True)
class Config:
    """How to run the echo CLI.

    ``command`` is the argv prefix (default: this Python running ``echo_cli.py``); ``env`` is added to its
    environment; ``gate``, if set, is awaited after the first piece of text (tests use it to hold a turn open).
    """

    command: list[str] = field(default_factory=lambda: [sys.executable, CLI])
    env: dict[str, str] = field(default_factory=dict)
    timeout: float = 30.0
    gate: Gate | None = field(default=None, compare=False)


class Driver:
    """A driver for the echo CLI: no tools, no approvals, no supplemental messages, no resume."""

    def __init__(self, config: Config | None = None) -> None:
        self.config = config or Config()

    @property
    def name(self) -> str:
        return "echo"

    def descriptor(self) -> Descriptor:
        # Everything left at its default is declared unsupported; the core refuses such requests before launch.
        return Descriptor(name="echo", provider="echo")

    def validate_config(self) -> None:
        c = self.config
        if not c.command or not all(isinstance(a, str) for a in c.command):
            raise InvalidDriverConfigError("echo.Config.command: must be a non-empty list of strings", option="command")
        if not (isinstance(c.timeout, int | float) and c.timeout > 0):
            raise InvalidDriverConfigError("echo.Config.timeout: must be a positive number", option="timeout")

    def config_fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.config.command).encode()).hexdigest()[:16]

    async def probe_environment(self) -> EnvironmentReport:
        """The CLI answers a one-word prompt: OK; otherwise DEGRADED (never starts a model, there is none)."""
        try:
            out = await capture_output([*self.config.command, "--version"], self._env(), timeout=self.config.timeout)
        except (OSError, TimeoutError) as exc:
            check = EnvironmentCheck("cli", False, f"{type(exc).__name__}: {exc}")
            return EnvironmentReport(driver="echo", status=EnvironmentStatus.MISSING, checks=(check,))
        ok = '"session"' in out
        return EnvironmentReport(
            driver="echo",
            status=EnvironmentStatus.OK if ok else EnvironmentStatus.DEGRADED,
            command=tuple(self.config.command),
            checks=(EnvironmentCheck("cli", ok, self.config.command[-1]),),
        )

    def _env(self) -> dict[str, str]:
        return {**os.environ, **self.config.env}

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        proc = await CLIProcess.start(
            list(self.config.command), cwd=invocation.workspace or None, env=self._env(), on_stderr=ctx.raw_stderr
        )
        await ctx.emit(ProcessInfo(kind=ProcessKind.SPAWN, text=" ".join(self.config.command), data={"pid": proc.pid}))
        try:
            await proc.write(invocation.prompt.encode())
            proc.close_stdin()
            return await self._read(proc, invocation, ctx)
        finally:
            code = await proc.close(1.0)  # reaps the process, killing it if the run was cancelled
            await ctx.emit(ProcessInfo(kind=ProcessKind.EXIT, data={"returncode": code, "pid": proc.pid}))

    async def _read(self, proc: CLIProcess, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        session = ""
        parts: list[str] = []
        usage: Usage | None = None
        gate = self.config.gate
        async for line in proc.lines():
            ctx.raw_stdout(line + b"\n")
            frame = json.loads(line)
            kind = frame.get("type")
            if kind == "session":
                session = str(frame["id"])
            elif kind == "text":
                parts.append(frame["text"])
                await ctx.emit(TextDelta(text=frame["text"]))
                if gate is not None:
                    held: Gate = gate
                    gate = None
                    await held(invocation)
            elif kind == "done":
                u = frame.get("usage") or {}
                usage = Usage(input_tokens=int(u.get("input_tokens", 0)), output_tokens=int(u.get("output_tokens", 0)))
        await proc.wait_stderr()
        if usage is None:
            raise DriverFailure(
                "the echo CLI ended without an answer", details={"stderr_tail": proc.stderr_tail()}, session_id=session
            )
        text = "".join(parts)
        ctx.transcript(TranscriptItem(kind="text", text=text, model="echo-1", session_id=session))
        await ctx.turn_end(usage=usage, text=text)
        return DriverOutcome(text=text, model="echo-1", provider="echo", usage=usage, session_id=session)
