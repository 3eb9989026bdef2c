"""The CodeBuddy Code driver: descriptor, validation, process reuse per Thread, inspection."""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from typing import Any

from ...driver import (
    FULL_APPROVALS,
    Boundary,
    ContinueMode,
    Descriptor,
    DriverFailure,
    DriverOutcome,
    EnvironmentReport,
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
    close_quietly,
    continues_session,
    parked,
    probe_cli,
    resolve_command,
    shielded_close,
)
from ._command import SILENT_ENV, Launch, build_launch, config_fingerprint
from ._config import INSTALL_HINT, Config
from ._locate import find_codebuddy
from ._mcp import TRANSPORTS as MCP_TRANSPORTS
from ._process import CodeBuddyProcess
from ._profile import codebuddy_layout
from ._session import CodeBuddyRun, emit_spawn

# SOON goes into the running turn through the ``steer`` control request (a user line written mid-turn would start
# a parallel session), AFTER_TURN as the next user line, INTERRUPT through the ``interrupt`` control request.
MESSAGES = MessageCapabilities(
    boundaries=frozenset({Boundary.IN_RUN, Boundary.TURN_END}),
    interrupt=True,
    continue_mode=ContinueMode.IN_RUN,
    confirmed_delivery=False,
    persists_delivered=True,
    min_version="2.163.0",
)
SECRET_ENVS = ("CODEBUDDY_API_KEY", "CODEBUDDY_AUTH_TOKEN")


def initialize_request() -> dict[str, Any]:
    """The first control request: a prompt follows, and AskUserQuestion may be offered to the model."""
    return {
        "subtype": "initialize",
        "hooks": None,
        "systemPrompt": None,
        "appendSystemPrompt": None,
        "agents": None,
        "sdkMcpServers": None,
        "hasPrompt": True,
        "capabilities": {"askUserQuestion": True},
    }


class Driver:
    """Runs CodeBuddy Code (``codebuddy-headless`` with stream-json on both sides); one persistent process per Thread.

    Example::

        from adaptor_nb.drivers import codebuddy
        agent = Agent(codebuddy.Driver(codebuddy.Config(model="default-model")), workspace="/repo")
    """

    session_codec = IdentityCodec()
    # CLI 2.163.0 checks host-tool arguments against the input schema itself: it coerces what it can ({"key": 5}
    # arrives as "5") and answers the rest with its own error result, so those calls never reach the host.
    cli_host_tool_validation = "Parameter validation failed"

    def __init__(self, config: Config | None = None, **fields: Any) -> None:
        cfg = config if config is not None else Config()
        if not isinstance(cfg, Config):
            raise TypeError(f"codebuddy.Driver() takes a codebuddy.Config, got {type(cfg).__name__}")
        if fields:
            cfg = replace(cfg, **fields)
        self.config = cfg

    @property
    def name(self) -> str:
        return "codebuddy"

    def __repr__(self) -> str:
        c = self.config
        parts = [f"model={c.model!r}"] if c.model else []
        if c.command:
            parts.append(f"command={c.command[0]!r}")
        if c.permission_mode != "default":
            parts.append(f"permission_mode={c.permission_mode!r}")
        if c.secret_env:
            parts.append(f"secret_env=<{len(c.secret_env)} hidden>")
        return f"codebuddy.Driver({', '.join(parts)})"

    def descriptor(self) -> Descriptor:
        return Descriptor(
            name="codebuddy",
            provider="codebuddy",
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
        )

    def validate_config(self) -> None:
        """Raise InvalidDriverConfigError for a bad field or a CLI that cannot be found."""
        self.config.validate()
        self.command()

    def command(self) -> list[str]:
        """The CLI argv prefix (Config.command, or the CLI found by ``find_codebuddy``)."""
        if self.config.command:
            return resolve_command(self.config.command, "codebuddy-headless", INSTALL_HINT, "codebuddy")
        found = find_codebuddy()
        if found is None:
            raise InvalidDriverConfigError(f"codebuddy: CodeBuddy Code was not found. {INSTALL_HINT}", option="command")
        return [found]

    def config_fingerprint(self) -> str:
        return config_fingerprint(self.config)

    # -- runs --------------------------------------------------------------------------------------------

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        inv = invocation
        self.validate_config()
        launch = build_launch(self.config, self.command(), inv)
        slot = None if inv.spawn else inv.slot
        grace = self.config.grace_period
        proc, resumed = await self._acquire(slot, launch, inv, grace)
        run = CodeBuddyRun(
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
    ) -> tuple[CodeBuddyProcess, str | None]:
        """Reuse the Thread's idle process when it is compatible and holds the session the core asks to continue;
        otherwise start one that resumes (or forks) the invocation's checkpoint, or a fresh session.

        Returns the process and, for a new process, the session id it resumes ("" for a fresh session).
        """
        wanted = inv.resume.session_id if inv.resume is not None else ""
        old = parked(slot, CodeBuddyProcess)
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
            proc = await CodeBuddyProcess.spawn(
                argv,
                cwd=launch.cwd,
                env=launch.env,
                fingerprint=launch.fingerprint,
                secrets=self._secrets(launch.env),
                max_line=self.config.max_line_bytes,
            )
        except OSError as exc:
            raise InvalidDriverConfigError(
                f"codebuddy: could not start {argv[0]!r}: {exc}. {INSTALL_HINT}", option="command"
            ) from None
        try:
            proc.init_info = await proc.control(initialize_request(), timeout=self.config.startup_timeout)
        except (TimeoutError, ConnectionError, RuntimeError) as exc:
            tail = proc.stderr_tail()
            await shielded_close(proc, grace)
            raise DriverFailure(
                f"CodeBuddy Code did not answer initialize: {type(exc).__name__}: {exc}",
                details={"stderr_tail": tail},
            ) from None
        if slot is not None:
            slot.attach(proc, launch.fingerprint, lambda: close_quietly(proc, grace))
        return proc, sid

    def _secrets(self, env: dict[str, str]) -> tuple[str, ...]:
        values = [env.get(k, "") for k in SECRET_ENVS]
        return tuple(v for v in (*values, *self.config.secret_env.values()) if v)

    # -- inspection --------------------------------------------------------------------------------------

    async def probe_environment(self) -> EnvironmentReport:
        """CLI found, its version and the auth source, without starting a model task."""

        def command() -> list[str]:
            self.config.validate()
            return self.command()

        return await probe_cli(
            "codebuddy",
            command,
            self._env(),
            timeout=self.config.startup_timeout,
            auth=self._auth_source(),
            no_auth="no API key, auth token or login found",
            messages=MESSAGES,
        )

    def profile_layout(self) -> ProfileLayout:
        """Where this driver's CLI keeps its profile, for ``profile=`` and skills (no process is started)."""
        return codebuddy_layout(self._env())

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.config.env)
        env.update(self.config.secret_env)
        return env

    def _auth_source(self) -> str:
        env = self._env()
        for key in SECRET_ENVS:
            if env.get(key):
                return key if env.get("CODEBUDDY_BASE_URL") else f"{key} (no CODEBUDDY_BASE_URL: the vendor service)"
        home = env.get("CODEBUDDY_CONFIG_DIR") or os.path.join(env.get("HOME", os.path.expanduser("~")), ".codebuddy")
        if os.path.exists(os.path.join(home, "models.json")):
            return "models.json"
        return ""

    async def list_models(self) -> list[ModelInfo]:
        """The models the CLI offers, read from its ``initialize`` reply (no model request is made)."""
        self.config.validate()
        argv = [*self.command(), "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        argv += ["--setting-sources", "none"]
        cwd = self.config.cwd or os.getcwd()
        env = self._env()
        env.update(SILENT_ENV)
        proc = await CodeBuddyProcess.spawn(argv, cwd=cwd, env=env, fingerprint="", secrets=self._secrets(env))
        try:
            body = await proc.control(initialize_request(), timeout=self.config.startup_timeout)
        except (TimeoutError, ConnectionError, RuntimeError) as exc:
            raise DriverFailure(
                f"CodeBuddy Code did not answer initialize: {exc}", details={"stderr_tail": proc.stderr_tail()}
            ) from None
        finally:
            await shielded_close(proc, self.config.grace_period)
        current = body.get("currentModelId")
        out: list[ModelInfo] = []
        for m in body.get("models") or []:
            if isinstance(m, dict) and isinstance(m.get("id"), str):
                out.append(ModelInfo(id=m["id"], name=str(m.get("name") or m["id"]), default=m["id"] == current))
        return out


def _discard(slot: ProcessSlot, proc: CodeBuddyProcess) -> None:
    """A process that could not be settled is killed and forgotten (its reader reaps it)."""
    if slot.value is proc:
        slot.detach()
    proc.kill_now()


__all__ = ["Driver"]
