"""The ACP driver: descriptor, validation, one persistent agent process per Thread, inspection."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
from dataclasses import replace
from typing import Any

from ...driver import (
    Availability,
    Boundary,
    ConfigError,
    ConfigSchema,
    ContinueMode,
    Descriptor,
    DriverFailure,
    DriverOutcome,
    EnvironmentReport,
    IdentityCodec,
    InvalidDriverConfigError,
    Invocation,
    MessageCapabilities,
    ModelInfo,
    ProcessInfo,
    ProcessKind,
    RunContext,
    StructuredOutputCapabilities,
    continues_session,
    parked,
    probe_cli,
    resolve_command,
)
from ._approvals import APPROVALS
from ._config import Config
from ._mcp import TRANSPORTS, servers_key
from ._offer import models, session_schema
from ._process import AgentProcess
from ._session import Turn, current_model, open_session, select_model

# ACP has no way to add input to a running prompt: queued messages start the next prompt once the turn ends, and an
# interrupt is ``session/cancel`` followed by a prompt carrying the message (where Config.interrupt says so).
MESSAGES = MessageCapabilities(
    boundaries=frozenset({Boundary.TURN_END}), interrupt=True, continue_mode=ContinueMode.RESUME
)
VERSION = "0.1.0"


class Driver:
    """Drives any Agent Client Protocol agent over stdio (``acp.Config(command=[...])`` or ``acp.preset(name)``).

    Example::

        from adaptor_nb.drivers import acp
        agent = Agent(acp.Driver(acp.preset("qwen")))
    """

    session_codec = IdentityCodec()

    def __init__(self, config: Config | None = None, **fields: Any) -> None:
        cfg = config if config is not None else Config()
        if not isinstance(cfg, Config):
            raise TypeError(f"acp.Driver() takes an acp.Config, got {type(cfg).__name__}")
        if fields:
            cfg = replace(cfg, **fields)
        self.config = cfg

    @property
    def name(self) -> str:
        return "acp"

    def __repr__(self) -> str:
        c = self.config
        parts = [f"name={c.agent_name!r}"]
        if c.secret_env:
            parts.append(f"secret_env=<{len(c.secret_env)} hidden>")
        return f"acp.Driver({', '.join(parts)})"

    @property
    def cli_host_tool_validation(self) -> str:
        """The agent's own error text for host-tool arguments that do not fit the schema (Config)."""
        return self.config.host_tool_validation

    @property
    def messages(self) -> MessageCapabilities:
        return MESSAGES if self.config.interrupt else replace(MESSAGES, interrupt=False)

    def descriptor(self) -> Descriptor:
        return Descriptor(
            name="acp",
            provider=self.config.agent_name,
            messages=self.messages,
            approvals=APPROVALS,
            structured_output=StructuredOutputCapabilities(native=False, prompted=True),
            resume=True,
            persistent=True,
            mcp=TRANSPORTS,
            host_tools=True,
            images=True,  # image content blocks, to agents that advertise promptCapabilities.image
        )

    def validate_config(self) -> None:
        """Raise InvalidDriverConfigError for a bad field or an agent binary that cannot be found."""
        self.config.validate()
        self.command()

    def command(self) -> list[str]:
        c = self.config
        argv = c.command or []
        hint = c.install_hint or "Install the agent or give its full path in acp.Config.command."
        found = resolve_command(argv[:1], argv[0] if argv else "", hint, "acp")
        return [*found, *argv[1:], *c.extra_args]

    def config_fingerprint(self) -> str:
        c = self.config
        raw = json.dumps({"command": c.command, "extra": c.extra_args, "mode": c.mode}, sort_keys=True)
        return hashlib.sha256(raw.encode()).hexdigest()[:16]

    def _env(self, inv: Invocation | None = None) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.config.env)
        env.update(self.config.secret_env)
        if inv is not None:
            env.update(inv.env)
        return env

    # -- runs --------------------------------------------------------------------------------------------

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        self.validate_config()
        inv = invocation
        cwd = inv.workspace or self.config.cwd or os.getcwd()
        fingerprint = self.config_fingerprint()
        agent = await self._acquire(inv, ctx, cwd, fingerprint)
        healthy = False
        try:
            if inv.images and not agent.takes_images:
                raise ConfigError(
                    f"the ACP agent {self.config.agent_name!r} does not accept images: its initialize answer lacks "
                    "agentCapabilities.promptCapabilities.image; send the prompt without images=",
                    option="images",
                    details={"capability": "promptCapabilities.image"},
                )
            c = self.config
            where = f"set {' or '.join(c.auth_envs)}" if c.auth_envs else ""
            await open_session(agent, inv, cwd, c.startup_timeout, c.mode, self._env(inv), where)
            await select_model(agent, inv.model, self.config.startup_timeout)
            text = inv.prompt
            instructions = "\n\n".join(s for s in (self.config.instructions, inv.instructions) if s)
            if instructions and not agent.prompted:
                text = f"{instructions}\n\n{text}"
            agent.prompted = True
            model = inv.model or current_model(agent)
            turn = Turn(agent, ctx, c.agent_name, model, c.grace_period, c.idle_timeout, inv.tools)
            try:
                outcome = await turn.execute(text, inv.images)
            finally:
                healthy = turn.finished and agent.alive
            outcome.checkpoint_data["workspace"] = cwd
            return outcome
        finally:
            await self._release(agent, inv, ctx, fingerprint, healthy)

    async def _acquire(self, inv: Invocation, ctx: RunContext, cwd: str, fingerprint: str) -> AgentProcess:
        """The Thread's parked agent when it still holds this run's session, else a fresh one."""
        slot = inv.slot
        agent = parked(slot, AgentProcess)
        if slot is not None and agent is not None:
            same = slot.fingerprint == fingerprint and agent.servers == servers_key(inv)
            if same and continues_session(inv, agent.session_id) and agent.alive:
                slot.detach()
                return agent
            await slot.close()
        argv = self.command()
        agent = await AgentProcess.spawn(
            argv,
            env=self._env(inv),
            cwd=cwd,
            timeout=self.config.startup_timeout,
            on_stderr=ctx.raw_stderr,
            version=VERSION,
            max_line=self.config.max_line_bytes,
        )
        agent.servers = servers_key(inv)
        await ctx.emit(ProcessInfo(kind=ProcessKind.SPAWN, text=" ".join(argv), data={"pid": agent.pid, "argv": argv}))
        return agent

    async def _release(
        self, agent: AgentProcess, inv: Invocation, ctx: RunContext, fingerprint: str, healthy: bool
    ) -> None:
        """Park the agent in the Thread's slot after a healthy run, else close it (bounded, even if cancelled)."""
        agent.attach(None, None)
        if healthy and inv.slot is not None and not inv.spawn:
            grace = self.config.grace_period

            async def closer() -> None:
                await agent.close(grace)

            inv.slot.attach(agent, fingerprint, closer)
            return
        closing = asyncio.get_running_loop().create_task(agent.close(self.config.grace_period))
        try:
            returncode = await asyncio.shield(closing)
        except BaseException:
            return  # cancelled again while closing: the close goes on in its own task
        task = asyncio.current_task()
        if not (task is not None and task.cancelling()):
            with contextlib.suppress(Exception):
                await ctx.emit(ProcessInfo(kind=ProcessKind.EXIT, data={"returncode": returncode, "pid": agent.pid}))

    # -- inspection --------------------------------------------------------------------------------------

    async def _offer(self) -> dict[str, Any]:
        """The ``session/new`` answer of the agent started for that and closed at once (no prompt is sent), in
        ``Config.cwd`` or the current directory."""
        self.validate_config()
        c = self.config
        cwd = c.cwd or os.getcwd()
        inv = Invocation(run_id="inspect", prompt="")
        env = self._env(inv)
        agent = await AgentProcess.spawn(
            self.command(),
            env=env,
            cwd=cwd,
            timeout=c.startup_timeout,
            on_stderr=None,
            version=VERSION,
            max_line=c.max_line_bytes,
        )
        try:
            await open_session(agent, inv, cwd, c.startup_timeout, "", env)
            return agent.session
        finally:
            await agent.close(c.grace_period)

    async def list_models(self) -> list[ModelInfo]:
        """The models the agent offers a new session (its ``model`` config option, else its ``models``)."""
        return models(await self._offer())

    async def config_schema(self) -> ConfigSchema:
        """The session settings the agent offers: its modes and config options (model, effort, ...) as a JSON
        Schema whose defaults are the current values."""
        try:
            session = await self._offer()
        except (DriverFailure, InvalidDriverConfigError) as exc:
            return ConfigSchema(driver="acp", status=Availability.UNAVAILABLE, detail=str(exc))
        return ConfigSchema(driver="acp", status=Availability.AVAILABLE, schema=session_schema(session))

    def _auth_source(self) -> str:
        env = self._env()
        return next((name for name in self.config.auth_envs if env.get(name)), "")

    async def probe_environment(self) -> EnvironmentReport:
        """The agent found, its version and its credential variable, without starting a model task."""

        def command() -> list[str]:
            self.config.validate()
            return self.command()[:1]

        names = ", ".join(self.config.auth_envs) or "no credential variable known"
        return await probe_cli(
            "acp",
            command,
            self._env(),
            timeout=self.config.startup_timeout,
            auth=self._auth_source(),
            no_auth=f"none of {names} is set (the agent may still have its own login)",
            messages=self.messages,
        )


__all__ = ["MESSAGES", "Driver"]
