"""The Claude Code driver: descriptor, validation, process reuse per Thread, inspection."""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from typing import Any

from ...driver import (
    FULL_APPROVALS,
    Boundary,
    ConfigError,
    ContinueMode,
    Descriptor,
    DriverFailure,
    DriverOutcome,
    EnvironmentCheck,
    EnvironmentReport,
    EnvironmentStatus,
    FeatureLevel,
    IdentityCodec,
    InvalidDriverConfigError,
    Invocation,
    MessageCapabilities,
    MessageFailure,
    ModelInfo,
    PolicyCapabilities,
    ProcessSlot,
    ProfileLayout,
    ResumeRejectedError,
    RunContext,
    SandboxLevel,
    StructuredOutputCapabilities,
    capture_output,
    close_quietly,
    continues_session,
    parked,
    resolve_command,
    shielded_close,
)
from ._command import Launch, Launches, config_fingerprint
from ._config import CREDENTIALS_HINT, INSTALL_HINT, Config, config_key
from ._mcp import TRANSPORTS as MCP_TRANSPORTS
from ._process import ClaudeProcess
from ._profile import claude_layout
from ._session import ClaudeRun, emit_spawn

MESSAGES = MessageCapabilities(
    boundaries=frozenset({Boundary.IN_RUN, Boundary.TURN_END}),
    interrupt=True,
    continue_mode=ContinueMode.IN_RUN,
    confirmed_delivery=True,
    persists_delivered=True,
    min_version="2.1.0",
)


class Driver:
    """Runs Claude Code (stream-json on both sides); one persistent process per Thread.

    Example::

        from adaptor_nb.drivers import claude
        agent = Agent(claude.Driver(claude.Config(model="sonnet")), workspace="/repo")
    """

    session_codec = IdentityCodec()

    def __init__(self, config: Config | None = None, **fields: Any) -> None:
        cfg = config if config is not None else Config()
        if not isinstance(cfg, Config):
            raise TypeError(f"claude.Driver() takes a claude.Config, got {type(cfg).__name__}")
        if fields:
            cfg = replace(cfg, **fields)
        self.config = cfg
        self._launches = Launches()
        self._valid: tuple[Any, ...] | None = None  # config_key of the configuration last validated
        self._fingerprint: tuple[tuple[Any, ...], str] | None = None

    @property
    def name(self) -> str:
        return "claude"

    def __repr__(self) -> str:
        c = self.config
        parts = [f"model={c.model!r}"] if c.model else []
        if c.command:
            parts.append(f"command={c.command[0]!r}")
        if c.permission_mode != "default":
            parts.append(f"permission_mode={c.permission_mode!r}")
        if c.secret_env:
            parts.append(f"secret_env=<{len(c.secret_env)} hidden>")
        return f"claude.Driver({', '.join(parts)})"

    def descriptor(self) -> Descriptor:
        return Descriptor(
            name="claude",
            provider="anthropic",
            messages=MESSAGES,
            approvals=FULL_APPROVALS,
            # read_only: only tools that cannot write are offered (--tools); web_search keeps or removes WebSearch.
            policy=PolicyCapabilities(
                sandbox=frozenset({SandboxLevel.READ_ONLY}),
                web_search=frozenset({FeatureLevel.ALLOW, FeatureLevel.DENY}),
            ),
            structured_output=StructuredOutputCapabilities(native=True, prompted=True),
            resume=True,
            fork=True,
            persistent=True,
            mcp=MCP_TRANSPORTS,
            host_tools=True,
            host_tools_channel=True,
        )

    def validate_config(self) -> None:
        """Raise InvalidDriverConfigError for a bad field or a CLI that cannot be found."""
        self._checked(config_key(self.config))

    def _checked(self, key: tuple[Any, ...], *, cwd: bool = True) -> list[str]:
        """Validate the configuration (``key``: its config_key) and resolve the CLI. The fields are checked again
        only when one has changed since they last passed; the working directory is looked at every time unless
        ``cwd`` is false (the caller looks at it); the CLI is looked for every time."""
        cfg = self.config
        if key != self._valid or (cwd and cfg.cwd is not None and not os.path.isdir(cfg.cwd)):
            self._valid = None
            cfg.validate()
            self._valid = key
        return self.command()

    def command(self) -> list[str]:
        """The CLI argv prefix (Config.command, or ``claude`` found on PATH)."""
        return resolve_command(self.config.command, "claude", INSTALL_HINT, "claude")

    def config_fingerprint(self) -> str:
        key = config_key(self.config)
        if self._fingerprint is None or self._fingerprint[0] != key:
            self._fingerprint = (key, config_fingerprint(self.config))
        return self._fingerprint[1]

    # -- runs --------------------------------------------------------------------------------------------

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        inv = invocation
        key = config_key(self.config)
        try:
            # The launch looks at the directory it runs in (one stat a send): a missing one fails it below.
            launch = self._launches.build(self.config, self._checked(key, cwd=False), inv, key)
        except ConfigError:
            self._checked(key)  # a missing Config.cwd is named by the configuration's own check
            raise
        slot = None if inv.spawn else inv.slot
        grace = self.config.grace_period
        proc, resumed = await self._acquire(slot, launch, inv, grace)
        run = ClaudeRun(
            proc,
            ctx,
            inv,
            resuming=bool(resumed),
            startup_timeout=self.config.startup_timeout,
            idle_timeout=self.config.idle_timeout,
        )
        keep = False
        try:
            if resumed is not None:
                await ctx.emit(emit_spawn(proc, resumed, inv.fork and inv.resume is not None))
            outcome = await run.execute()
            keep = slot is not None and proc.alive and not proc.busy
            if not keep:
                keep = True  # closed right here, so the cleanup below has nothing left to do
                if slot is not None and slot.value is proc:
                    slot.detach()
                rc = await proc.close(grace)
                if rc not in (0, None):
                    outcome.healthy = False
                    outcome.metadata["exit_code"] = str(rc)
            return outcome
        except DriverFailure:
            keep = slot is not None and proc.alive and not proc.busy
            raise
        except ResumeRejectedError:
            keep = False
            raise
        except asyncio.CancelledError:
            run.fail_unsettled(MessageFailure.CANCELLED)
            if slot is not None and proc.alive:
                keep = True
                proc.settle_in_background(grace, lambda: _discard(slot, proc))
            raise
        except BaseException:
            if slot is not None and proc.alive and proc.busy:
                keep = True
                proc.settle_in_background(grace, lambda: _discard(slot, proc))
            else:
                keep = slot is not None and proc.alive
            raise
        finally:
            run.fail_unsettled(MessageFailure.RUN_FAILED)
            await run.close()
            if not keep:
                if slot is not None and slot.value is proc:
                    slot.detach()
                await shielded_close(proc, grace)

    async def _acquire(
        self, slot: ProcessSlot | None, launch: Launch, inv: Invocation, grace: float
    ) -> tuple[ClaudeProcess, str | None]:
        """Reuse the Thread's idle process when it is compatible and holds the session the core asks to continue;
        otherwise start one that resumes (or forks) the invocation's checkpoint, or a fresh session.

        Returns the process and, for a new process, the session id it resumes ("" for a fresh session).
        """
        wanted = inv.resume.session_id if inv.resume is not None else ""
        old = parked(slot, ClaudeProcess)
        if slot is not None and old is not None:
            if (
                continues_session(inv, old.session_id)
                and old.reusable(launch.fingerprint)
                and await old.settled(grace + 1.0)
            ):
                return old, None
            slot.detach()
            if old.loop is asyncio.get_running_loop():
                await shielded_close(old, grace)
            else:
                old.kill_now()  # parked by an event loop that is gone (for example an earlier asyncio.run)
        sid = wanted
        fork = bool(inv.fork and wanted)
        argv = launch.with_resume(sid, fork=fork)
        try:
            proc = await ClaudeProcess.spawn(
                argv,
                cwd=launch.cwd,
                env=launch.env,
                fingerprint=launch.fingerprint,
                max_line=self.config.max_line_bytes,
            )
        except OSError as exc:
            raise InvalidDriverConfigError(
                f"claude: could not start {argv[0]!r}: {exc}. {INSTALL_HINT}", option="command"
            ) from None
        if slot is not None:
            slot.attach(proc, launch.fingerprint, lambda: close_quietly(proc, grace))
        return proc, sid

    # -- inspection --------------------------------------------------------------------------------------

    async def probe_environment(self) -> EnvironmentReport:
        """CLI found, its version and the auth source, without starting a model task."""
        checks: list[EnvironmentCheck] = []
        try:
            self.config.validate()
            command = self.command()
        except ConfigError as exc:
            checks.append(EnvironmentCheck("cli", False, str(exc)))
            return EnvironmentReport(
                driver="claude", status=EnvironmentStatus.MISSING, checks=tuple(checks), messages=MESSAGES
            )
        checks.append(EnvironmentCheck("cli", True, command[0]))
        version = ""
        try:
            out = await capture_output([*command, "--version"], self._env(), timeout=self.config.startup_timeout)
            version = out.strip().split()[0] if out.strip() else ""
            checks.append(EnvironmentCheck("version", bool(version), out.strip()))
        except (OSError, TimeoutError) as exc:
            checks.append(EnvironmentCheck("version", False, f"{type(exc).__name__}: {exc}"))
        auth = self._auth_source()
        checks.append(EnvironmentCheck("auth", bool(auth), auth or CREDENTIALS_HINT))
        status = EnvironmentStatus.OK if version and auth else EnvironmentStatus.DEGRADED
        return EnvironmentReport(
            driver="claude",
            status=status,
            version=version,
            command=tuple(command),
            auth_source=auth,
            checks=tuple(checks),
            messages=MESSAGES,
        )

    def profile_layout(self) -> ProfileLayout:
        """Where this driver's CLI keeps its profile, for ``profile=`` and skills (no process is started)."""
        return claude_layout(self._env())

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.config.env)
        env.update(self.config.secret_env)
        return env

    def _auth_source(self) -> str:
        env = self._env()
        for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
            if env.get(key):
                return key
        for key in ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"):
            if env.get(key) not in (None, "", "0", "false"):
                return key
        home = env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME", os.path.expanduser("~")), ".claude")
        if os.path.exists(os.path.join(home, ".credentials.json")):
            return "claude login"
        return ""

    async def list_models(self) -> list[ModelInfo]:
        """The models the CLI offers, read from its ``initialize`` reply (no model request is made)."""
        self.config.validate()
        argv = [*self.command(), "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        cwd = self.config.cwd or os.getcwd()
        env = self._env()
        proc = await ClaudeProcess.spawn(argv, cwd=cwd, env=env, fingerprint="", max_line=self.config.max_line_bytes)
        try:
            body = await proc.control({"subtype": "initialize", "hooks": None}, timeout=self.config.startup_timeout)
        except (TimeoutError, ConnectionError, RuntimeError) as exc:
            raise DriverFailure(
                f"Claude Code did not answer initialize: {exc}", details={"stderr_tail": proc.stderr_tail()}
            ) from None
        finally:
            await shielded_close(proc, self.config.grace_period)
        out: list[ModelInfo] = []
        for m in body.get("models") or []:
            if isinstance(m, dict) and isinstance(m.get("value"), str):
                name = m.get("displayName") or m.get("resolvedModel") or m["value"]
                out.append(ModelInfo(id=m["value"], name=str(name), default=m["value"] == "default"))
        return out


def _discard(slot: ProcessSlot, proc: ClaudeProcess) -> None:
    """A process that could not be settled is killed and forgotten (its reader reaps it)."""
    if slot.value is proc:
        slot.detach()
    proc.kill_now()


__all__ = ["Driver"]
