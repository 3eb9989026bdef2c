"""The driver of a Claude-family CLI: validation, process reuse per Thread, the run's lifecycle, inspection.

A CLI's driver subclasses ``ClaudeFamilyDriver`` with its Config, profile, translator and descriptor, and says
how its CLI is found (``command``), which credentials it has (``auth_source``) and how MCP servers are passed.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from ..._enums import FeatureLevel, MessageFailure, SandboxLevel
from ..._errors import ConfigError, InvalidDriverConfigError, ResumeRejectedError
from .._claude_stream import ClaudeLikeTranslator
from .._cli_probe import probe_cli
from .._detect import configured_model
from .._hosted import HostedTools
from .._mcp_config import MCP_CONFIG_TRANSPORTS, mcp_config_args
from .._optional import SkillCapability, StreamCapability
from .._reuse import close_quietly, continues_session, parked, shielded_close
from .._spi import (
    FULL_APPROVALS,
    Descriptor,
    DriverFailure,
    DriverOutcome,
    EnvironmentReport,
    IdentityCodec,
    Invocation,
    MessageCapabilities,
    ModelInfo,
    PolicyCapabilities,
    ProcessSlot,
    RunContext,
    StructuredOutputCapabilities,
)
from ._command import Launch, Launches, config_fingerprint
from ._config import ClaudeFamilyConfig, config_key
from ._profile import ClaudeFamilyProfile

if TYPE_CHECKING:
    from ._process import ClaudeFamilyProcess
    from ._run import ClaudeFamilyRun


class ClaudeFamilyDriver:
    """One persistent Claude-family process per Thread, stream-json on both sides.

    Class attributes a CLI's driver sets: ``CONFIG`` (its Config class), ``PROFILE``, ``TRANSLATOR`` (the
    translator class) and ``RUN`` (the driver's own ``ClaudeFamilyRun`` subclass, or None for ``ClaudeFamilyRun``);
    ``MESSAGES`` follows from the profile. The process and run machinery load with the first run, not with the class.
    """

    CONFIG: ClassVar[type[ClaudeFamilyConfig]]
    PROFILE: ClassVar[ClaudeFamilyProfile]
    TRANSLATOR: ClassVar[type[ClaudeLikeTranslator]]
    RUN: ClassVar[type[ClaudeFamilyRun] | None] = None
    MESSAGES: ClassVar[MessageCapabilities]

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls.MESSAGES = cls.PROFILE.messages

    session_codec = IdentityCodec()

    def __init__(self, config: ClaudeFamilyConfig | None = None, **fields: Any) -> None:
        name = self.PROFILE.name
        cfg = config if config is not None else self.CONFIG()
        if not isinstance(cfg, self.CONFIG):
            raise TypeError(f"{name}.Driver() takes a {name}.Config, got {type(cfg).__name__}")
        if fields:
            cfg = replace(cfg, **fields)
        self.config = cfg
        self._launches = Launches(self.PROFILE, self.mcp_args)
        self._valid: tuple[Any, ...] | None = None  # config_key of the configuration last validated
        self._fingerprint: tuple[tuple[Any, ...], str] | None = None

    @property
    def name(self) -> str:
        return self.PROFILE.name

    def __repr__(self) -> str:
        c = self.config
        parts = [f"model={c.model!r}"] if c.model else []
        if c.command:
            parts.append(f"command={c.command[0]!r}")
        if c.permission_mode != "default":
            parts.append(f"permission_mode={c.permission_mode!r}")
        if c.secret_env:
            parts.append(f"secret_env=<{len(c.secret_env)} hidden>")
        return f"{self.PROFILE.name}.Driver({', '.join(parts)})"

    def descriptor(self) -> Descriptor:
        profile = self.PROFILE
        return Descriptor(
            name=profile.name,
            provider=profile.provider,
            messages=self.MESSAGES,
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
            mcp=MCP_CONFIG_TRANSPORTS,
            host_tools=True,
            host_tools_channel=profile.host_tools_channel,
            images=True,  # the prompt's user line carries base64 image blocks
        )

    def validate_config(self) -> None:
        """Raise InvalidDriverConfigError for a bad field or a CLI that cannot be found."""
        self._checked(config_key(self.config))

    # -- optional interfaces (section 15) ------------------------------------------------------------------

    async def detect_model(self) -> str:
        """ModelDetector: ``Config.model``, else the ``model`` of the profile's settings file."""
        if self.config.model:
            return self.config.model
        layout = getattr(self, "profile_layout", None)
        return configured_model(layout()) if callable(layout) else ""

    def skill_support(self) -> SkillCapability:
        """SkillSupport: the CLI discovers skills in its profile's ``skills/`` folder."""
        return SkillCapability(native=True)

    def stream_capability(self) -> StreamCapability:
        """StreamSupport: stream-json events; text, thinking and tool arguments as deltas with partial messages."""
        partial = bool(self.config.partial_messages)
        return StreamCapability(native=True, token_level=partial, reasoning=True, tool_call_args=partial, hitl=True)

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
        """The CLI argv prefix."""
        raise NotImplementedError

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
        from ._run import ClaudeFamilyRun, spawn_event

        run = (self.RUN or ClaudeFamilyRun)(
            proc,
            ctx,
            inv,
            self.TRANSLATOR(ctx.transcript),
            resuming=bool(resumed),
            startup_timeout=self.config.startup_timeout,
            idle_timeout=self.config.idle_timeout,
        )
        keep = False
        try:
            if resumed is not None:
                await ctx.emit(spawn_event(proc, resumed, inv.fork and inv.resume is not None))
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
    ) -> tuple[ClaudeFamilyProcess, str | None]:
        """Reuse the Thread's idle process when it is compatible and holds the session the core asks to continue;
        otherwise start one that resumes (or forks) the invocation's checkpoint, or a fresh session.

        Returns the process and, for a new process, the session id it resumes ("" for a fresh session).
        """
        wanted = inv.resume.session_id if inv.resume is not None else ""
        from ._process import ClaudeFamilyProcess

        old = parked(slot, ClaudeFamilyProcess)
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
        proc = await self._start(argv, launch.cwd, launch.env, launch.fingerprint)
        if slot is not None:
            slot.attach(proc, launch.fingerprint, lambda: close_quietly(proc, grace))
        return proc, sid

    async def _start(self, argv: list[str], cwd: str, env: dict[str, str], fingerprint: str) -> ClaudeFamilyProcess:
        """Start the CLI, and send the profile's ``initialize`` (its answer is awaited when a run first needs it)."""
        from ._process import ClaudeFamilyProcess

        name = self.PROFILE.name
        try:
            proc = await ClaudeFamilyProcess.spawn(
                argv,
                profile=self.PROFILE,
                cwd=cwd,
                env=env,
                fingerprint=fingerprint,
                secrets=self.secrets(env),
                max_line=self.config.max_line_bytes,
            )
        except OSError as exc:
            raise InvalidDriverConfigError(
                f"{name}: could not start {argv[0]!r}: {exc}. {self.PROFILE.install_hint}", option="command"
            ) from None
        initialize = self.PROFILE.initialize
        if initialize is not None:
            try:
                proc.init_info = await proc.control(dict(initialize), timeout=self.config.startup_timeout)
            except (TimeoutError, ConnectionError, RuntimeError) as exc:
                tail = proc.stderr_tail()
                await shielded_close(proc, self.config.grace_period)
                raise DriverFailure(
                    f"{self.PROFILE.label} did not answer initialize: {type(exc).__name__}: {exc}",
                    details={"stderr_tail": tail},
                ) from None
            except BaseException:  # cancelled while the CLI starts: it does not outlive the run
                await shielded_close(proc, self.config.grace_period)
                raise
        return proc

    def mcp_args(self, servers: Any, hosted: HostedTools | None) -> tuple[list[str], dict[str, str]]:
        """The CLI arguments for MCP ``servers`` and the host tools, and the private environment of their secrets."""
        return mcp_config_args(servers, hosted)

    def secrets(self, env: dict[str, str]) -> tuple[str, ...]:
        """Values the CLI's output must never show (none unless the driver says so)."""
        return ()

    # -- inspection --------------------------------------------------------------------------------------

    async def probe_environment(self) -> EnvironmentReport:
        """CLI found, its version and the auth source, without starting a model task."""

        def command() -> list[str]:
            self.config.validate()
            return self.command()

        return await probe_cli(
            self.PROFILE.name,
            command,
            self.env(),
            timeout=self.config.startup_timeout,
            auth=self.auth_source(),
            no_auth=self.PROFILE.no_auth,
            messages=self.MESSAGES,
            keep_version=True,
        )

    def env(self) -> dict[str, str]:
        """The environment of an inspection process (the process environment with the configuration's)."""
        env = dict(os.environ)
        env.update(self.config.env)
        env.update(self.config.secret_env)
        return env

    def auth_source(self) -> str:
        """The credential source the CLI would use ("" for none)."""
        raise NotImplementedError

    async def list_models(self) -> list[ModelInfo]:
        """The models the CLI offers, read from its ``initialize`` reply (no model request is made)."""
        from ._process import ClaudeFamilyProcess

        self.config.validate()
        argv = [*self.command(), "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        argv += self.PROFILE.list_models_args
        cwd = self.config.cwd or os.getcwd()
        env = self.env()
        env.update(self.PROFILE.silent_env)
        proc = await ClaudeFamilyProcess.spawn(
            argv,
            profile=self.PROFILE,
            cwd=cwd,
            env=env,
            fingerprint="",
            secrets=self.secrets(env),
            max_line=self.config.max_line_bytes,
        )
        request = dict(self.PROFILE.initialize or {"subtype": "initialize", "hooks": None})
        try:
            body = await proc.control(request, timeout=self.config.startup_timeout)
        except (TimeoutError, ConnectionError, RuntimeError) as exc:
            raise DriverFailure(
                f"{self.PROFILE.label} did not answer initialize: {exc}", details={"stderr_tail": proc.stderr_tail()}
            ) from None
        finally:
            await shielded_close(proc, self.config.grace_period)
        return self.models_of(body)

    def models_of(self, body: dict[str, Any]) -> list[ModelInfo]:
        """The models an ``initialize`` reply lists."""
        out: list[ModelInfo] = []
        for m in body.get("models") or []:
            if isinstance(m, dict) and isinstance(m.get("value"), str):
                name = m.get("displayName") or m.get("resolvedModel") or m["value"]
                out.append(ModelInfo(id=m["value"], name=str(name), default=m["value"] == "default"))
        return out


def _discard(slot: ProcessSlot, proc: ClaudeFamilyProcess) -> None:
    """A process that could not be settled is killed and forgotten (its reader reaps it)."""
    if slot.value is proc:
        slot.detach()
    proc.kill_now()
