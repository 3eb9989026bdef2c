"""The Codex driver: one ``codex app-server`` per explicit Thread, threads and turns over JSON-RPC."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
from dataclasses import replace
from importlib import metadata
from typing import Any

from ...driver import (
    ALL_APPROVAL_MODES,
    ApprovalCapabilities,
    ApprovalKind,
    ApprovalMode,
    Availability,
    Boundary,
    ConfigSchema,
    ContinueMode,
    Descriptor,
    DriverFailure,
    DriverOutcome,
    EnvironmentCheck,
    EnvironmentReport,
    EnvironmentStatus,
    FailureReason,
    FeatureLevel,
    IdentityCodec,
    InvalidDriverConfigError,
    Invocation,
    MessageCapabilities,
    ModelInfo,
    PolicyCapabilities,
    ProcessInfo,
    ProcessKind,
    ProfileLayout,
    QuestionMode,
    ResumeRejectedError,
    RunContext,
    SandboxLevel,
    SkillCapability,
    StreamCapability,
    StructuredOutputCapabilities,
    capture_output,
    check_bearer_envs,
    configured_model,
    continues_session,
    parked,
)
from ._command import codex_command
from ._config import Config
from ._home import auth_source, config_overrides
from ._mcp import TRANSPORTS as MCP_TRANSPORTS
from ._mcp import hosted_overrides, mcp_overrides
from ._process import AppServer, OutputRoute
from ._profile import codex_layout
from ._rpc import Closed, RpcError, ServerClosedError
from ._schema import read_config_schema
from ._session import TurnRunner

TESTED_VERSION = "0.171.0"
SANDBOX_MODES = {
    SandboxLevel.READ_ONLY: {"type": "readOnly"},
    SandboxLevel.WORKSPACE_WRITE: {"type": "workspaceWrite", "writableRoots": [], "networkAccess": False},
    SandboxLevel.UNRESTRICTED: {"type": "dangerFullAccess"},
}
WEB_SEARCH_MODES = {FeatureLevel.ALLOW: "live", FeatureLevel.DENY: "disabled"}
MESSAGES = MessageCapabilities(
    boundaries=frozenset({Boundary.IN_RUN, Boundary.TURN_END}),
    interrupt=True,
    continue_mode=ContinueMode.IN_RUN,
    confirmed_delivery=True,
    persists_delivered=True,
    min_version=TESTED_VERSION,
)
DESCRIPTOR = Descriptor(
    name="codex",
    provider="openai",
    messages=MESSAGES,
    approvals=ApprovalCapabilities(
        kinds=frozenset({ApprovalKind.PERMISSION}),
        permission_modes=ALL_APPROVAL_MODES,
        # Codex asks no questions in its default mode; any it does ask are declined.
        question_modes=frozenset({QuestionMode.AUTO_DENY}),
    ),
    policy=PolicyCapabilities(
        sandbox=frozenset(SANDBOX_MODES),
        web_search=frozenset(WEB_SEARCH_MODES),
    ),
    structured_output=StructuredOutputCapabilities(native=True, prompted=True),
    resume=True,
    fork=True,
    persistent=True,
    mcp=MCP_TRANSPORTS,
    host_tools=True,
    images=True,  # turn/start image items (data: URLs)
)


def _package_version() -> str:
    try:
        return metadata.version("adaptor_nb")
    except metadata.PackageNotFoundError:
        return "0"


def _absolute(path: str) -> str:
    return os.path.abspath(path)


def _has_config(home: str) -> bool:
    return os.path.isfile(os.path.join(home, "config.toml"))


def _version_tuple(text: str) -> tuple[int, ...]:
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(g) for g in match.groups()) if match else ()


class Driver:
    """Runs OpenAI Codex through ``codex app-server`` (JSON-RPC over stdio).

    An explicit Thread keeps one app-server process between runs; direct sends and ``spawn=True`` start a fresh
    one. Supplemental messages use ``turn/steer`` (SOON), the next ``turn/start`` (AFTER_TURN) and
    ``turn/interrupt`` (INTERRUPT); approvals answer Codex's command and file-change requests; structured output
    uses ``turn/start.outputSchema``.
    """

    session_codec = IdentityCodec()

    def __init__(self, config: Config | None = None, **fields: Any) -> None:
        cfg = config if config is not None else Config()
        if fields:
            cfg = replace(cfg, **fields)
        self.config = cfg

    @property
    def name(self) -> str:
        return "codex"

    def __repr__(self) -> str:
        c = self.config
        return f"codex.Driver(model={c.model or 'default'!r}, command={c.command!r}, codex_home={c.codex_home!r})"

    def descriptor(self) -> Descriptor:
        return DESCRIPTOR

    def validate_config(self) -> None:
        if not isinstance(self.config, Config):
            raise InvalidDriverConfigError("codex.Driver needs a codex.Config", option="config")
        self.config.validate()
        codex_command(self.config.command)

    def config_fingerprint(self) -> str:
        c = self.config
        parts = {
            "command": c.command or ["codex"],
            "codex_home": os.path.abspath(c.codex_home) if c.codex_home else "",
            "config": c.config,
            "extra_args": c.extra_args,
            "instructions": c.instructions,
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]

    # -- process set-up ----------------------------------------------------------------------------------

    def _argv(self, inv: Invocation) -> list[str]:
        argv = [*codex_command(self.config.command), "app-server", *config_overrides(self.config.config)]
        web = WEB_SEARCH_MODES.get(inv.policy.web_search)
        if web is not None:
            argv += ["-c", f'web_search="{web}"']
        argv += self._mcp(inv, self._base_env(inv))[0]
        return argv + list(self.config.extra_args)

    def _base_env(self, inv: Invocation) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.config.env)
        env.update(self.config.secret_env)
        if self.config.codex_home:
            env["CODEX_HOME"] = os.path.abspath(self.config.codex_home)
        env.update(inv.env)  # after codex_home: a profile= folder chosen for the Agent wins
        env.setdefault("NO_COLOR", "1")
        return env

    def profile_layout(self) -> ProfileLayout:
        """Where this driver's CLI keeps its profile, for ``profile=`` and skills (no process is started)."""
        return codex_layout({**os.environ, **self.config.env}, self.config.codex_home)

    async def detect_model(self) -> str:
        """ModelDetector: ``Config.model``, else the ``model`` of ``config.toml`` in the Codex home."""
        return self.config.model or configured_model(self.profile_layout())

    def skill_support(self) -> SkillCapability:
        """SkillSupport: Codex reads ``skills/<name>/SKILL.md`` in its home."""
        return SkillCapability(native=True)

    def stream_capability(self) -> StreamCapability:
        """StreamSupport: app-server notifications; message and reasoning deltas, whole tool arguments."""
        return StreamCapability(native=True, token_level=True, reasoning=True, tool_call_args=False, hitl=True)

    def _env(self, inv: Invocation) -> dict[str, str]:
        env = self._base_env(inv)
        env.update(self._mcp(inv, env)[1])  # MCP secrets travel by reference, never on the command line
        return env

    @staticmethod
    def _mcp(inv: Invocation, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        """The ``-c`` overrides and private environment for the run's MCP servers (nothing when it inherits), and
        for the Agent's host tools (always, whatever ``mcp`` says)."""
        argv: list[str] = []
        secrets: dict[str, str] = {}
        if inv.mcp is not None:
            check_bearer_envs(inv.mcp, env, "codex")
            home = env.get("CODEX_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".codex")
            argv, secrets = mcp_overrides(inv.mcp, home)
        if inv.tools is not None:
            more, more_secrets = hosted_overrides(inv.tools)
            argv += more
            secrets.update(more_secrets)
        return argv, secrets

    @staticmethod
    def _process_fingerprint(argv: list[str], env: dict[str, str], cwd: str) -> str:
        digest = hashlib.sha256(json.dumps([argv, sorted(env.items()), cwd]).encode())
        return digest.hexdigest()[:24]

    def _thread_params(self, inv: Invocation, cwd: str) -> dict[str, Any]:
        params: dict[str, Any] = {"cwd": cwd}
        model = inv.model or self.config.model
        if model:
            params["model"] = model
        instructions = "\n\n".join(t for t in (self.config.instructions, inv.instructions) if t)
        if instructions:
            params["developerInstructions"] = instructions
        if self.config.fast_mode:
            params["serviceTier"] = "fast"
        return params

    def _turn_settings(self, inv: Invocation, server: AppServer) -> dict[str, Any]:
        overrides: dict[str, Any] = {}
        model = inv.model or self.config.model
        if model:
            overrides["model"] = model
        if self.config.reasoning_effort:
            overrides["effort"] = self.config.reasoning_effort
        if self.config.fast_mode:
            overrides["serviceTier"] = "fast"
        # Explicit policy wins; otherwise restore the thread's own default, so an earlier run's policy never leaks.
        sandbox = SANDBOX_MODES.get(inv.policy.sandbox) or server.defaults.get("sandbox")
        if sandbox:
            overrides["sandboxPolicy"] = sandbox
        if inv.policy.approvals.permission is not ApprovalMode.INHERIT:
            overrides["approvalPolicy"] = "on-request"
        elif server.defaults.get("approvalPolicy"):
            overrides["approvalPolicy"] = server.defaults["approvalPolicy"]
        return overrides

    async def _spawn(self, argv: list[str], env: dict[str, str], cwd: str, ctx: RunContext) -> AppServer:
        route = OutputRoute()
        route.ctx = ctx
        cfg = self.config
        try:
            server = await AppServer.spawn(
                argv,
                env=env,
                cwd=cwd,
                client_name=cfg.client_name,
                client_version=_package_version(),
                startup_timeout=cfg.startup_timeout,
                route=route,
                grace=cfg.grace_period,
                max_line=cfg.max_line_bytes,
            )
        except TimeoutError:  # before OSError: TimeoutError is one
            raise DriverFailure(
                f"codex app-server did not answer initialize within {cfg.startup_timeout:g} s (Config.startup_timeout)",
                details={"argv": argv},
                retryable=True,
            ) from None
        except OSError as exc:
            raise DriverFailure(
                f"could not start codex app-server ({argv[0]}): {exc}",
                reason=FailureReason.INFRASTRUCTURE,
                details={"argv": argv},
                cause=exc,
            ) from None
        except ServerClosedError as exc:
            raise DriverFailure(
                f"codex app-server {exc.reason or 'exited'} during start-up (exit code {exc.returncode})",
                reason=FailureReason.INFRASTRUCTURE,
                details={"argv": argv, "exit_code": exc.returncode, "stderr_tail": exc.stderr_tail},
            ) from None
        except RpcError as exc:
            raise DriverFailure(
                f"codex app-server refused initialize: {exc.message}", details={"code": exc.code}
            ) from None
        await ctx.emit(
            ProcessInfo(
                kind=ProcessKind.SPAWN,
                text=" ".join(argv),
                metadata={"pid": str(server.pid), "user_agent": server.user_agent},
                data={"pid": server.pid, "argv": argv},
            )
        )
        return server

    async def _acquire(
        self, inv: Invocation, ctx: RunContext, argv: list[str], env: dict[str, str], cwd: str, fingerprint: str
    ) -> AppServer:
        """The Thread's parked app-server when it still fits this run, else a fresh one."""
        slot = inv.slot
        server = parked(slot, AppServer)
        if slot is not None and server is not None:
            fits = slot.fingerprint == fingerprint and continues_session(inv, server.thread_id)
            if fits and server.alive and not any(isinstance(i, Closed) for i in server.drain_stale()):
                slot.detach()
                server.route.ctx = ctx
                return server
            await slot.close()
        return await self._spawn(argv, env, cwd, ctx)

    async def _open_thread(self, server: AppServer, inv: Invocation, cwd: str) -> None:
        if server.thread_id:
            return
        params = self._thread_params(inv, cwd)
        try:
            if inv.resume is not None:
                method = "thread/fork" if inv.fork else "thread/resume"
                params = {"threadId": inv.resume.session_id, "excludeTurns": True, **params}
            else:
                method, params = "thread/start", {**params, "ephemeral": not inv.thread_key}
            result = await server.rpc.request(method, params, timeout=self.config.startup_timeout)
        except RpcError as exc:
            if inv.resume is not None:
                verb = "fork" if inv.fork else "resume"
                raise ResumeRejectedError(
                    f"Codex refused to {verb} thread {inv.resume.session_id}: {exc.message}",
                    key=inv.thread_key,
                    details={"code": exc.code, "session_id": inv.resume.session_id},
                ) from None
            raise DriverFailure(f"Codex refused thread/start: {exc.message}", details={"code": exc.code}) from None
        except ServerClosedError as exc:
            raise DriverFailure(
                f"codex app-server exited before the thread opened (exit code {exc.returncode})",
                reason=FailureReason.INFRASTRUCTURE,
                details={"exit_code": exc.returncode, "stderr_tail": exc.stderr_tail},
            ) from None
        except TimeoutError:
            raise DriverFailure(
                f"Codex did not answer {method} within {self.config.startup_timeout:g} s (Config.startup_timeout)",
                details={"stderr_tail": server.proc.stderr_tail()},
                retryable=True,
            ) from None
        server.adopt_thread(result)

    async def _release(
        self, server: AppServer, inv: Invocation, ctx: RunContext, fingerprint: str, healthy: bool
    ) -> None:
        """Park the process in the Thread's slot after a healthy run, else close it (bounded, even if cancelled)."""
        server.route.ctx = None
        if healthy and server.alive and inv.slot is not None and not inv.spawn:

            async def closer() -> None:
                await server.close(self.config.grace_period)

            inv.slot.attach(server, fingerprint, closer)
            return
        closing = asyncio.get_running_loop().create_task(server.close(self.config.grace_period))
        try:
            returncode = await asyncio.shield(closing)
        except BaseException:
            return  # cancelled again while closing: the close goes on in its own task
        task = asyncio.current_task()
        if not server.exit_reported and not (task is not None and task.cancelling()):
            with contextlib.suppress(Exception):
                await ctx.emit(ProcessInfo(kind=ProcessKind.EXIT, data={"returncode": returncode, "pid": server.pid}))

    # -- the run -----------------------------------------------------------------------------------------

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        inv = invocation
        cwd = _absolute(inv.workspace or self.config.cwd or os.getcwd())
        argv = self._argv(inv)
        env = self._env(inv)
        fingerprint = self._process_fingerprint(argv, env, cwd)
        server = await self._acquire(inv, ctx, argv, env, cwd, fingerprint)
        healthy = False
        try:
            await self._open_thread(server, inv, cwd)
            runner = TurnRunner(
                server,
                ctx,
                self._turn_settings(inv, server),
                output_schema=inv.output_schema.schema if inv.output_schema is not None else None,
                idle_timeout=self.config.idle_timeout,
                connect_timeout=self.config.connect_timeout,
                hosted=inv.tools,
            )
            await runner.run(inv.prompt, inv.images)
            healthy = server.alive
            structured: Any = None
            has_structured = False
            if inv.output_schema is not None:
                try:
                    structured, has_structured = json.loads(runner.text), True
                except ValueError:
                    pass
            model = str(server.defaults.get("model") or inv.model or self.config.model)
            return DriverOutcome(
                text=runner.text,
                model=model,
                provider=str(server.defaults.get("modelProvider") or "openai"),
                usage=runner.usage,
                metadata={"thread_id": server.thread_id, "user_agent": server.user_agent},
                structured=structured,
                has_structured=has_structured,
                session_id=server.thread_id,
                healthy=healthy,
            )
        finally:
            await self._release(server, inv, ctx, fingerprint, healthy)

    # -- inspection --------------------------------------------------------------------------------------

    async def probe_environment(self) -> EnvironmentReport:
        """Find the CLI, read its version and the auth source; never starts a model task."""
        try:
            self.config.validate()
            argv = codex_command(self.config.command)
        except InvalidDriverConfigError as exc:
            return EnvironmentReport(
                driver="codex",
                status=EnvironmentStatus.UNAVAILABLE,
                checks=(EnvironmentCheck("command", False, str(exc)),),
            )
        checks = [EnvironmentCheck("command", True, argv[0])]
        version = ""
        env = self._env(Invocation(run_id="probe", prompt=""))
        try:
            out = await capture_output([*argv, "--version"], env, timeout=self.config.startup_timeout)
            version = out.strip().split()[-1] if out.strip() else ""
            checks.append(EnvironmentCheck("version", bool(version), version or "no version printed"))
        except (OSError, TimeoutError) as exc:
            detail = f"no answer within {self.config.startup_timeout:g} s" if isinstance(exc, TimeoutError) else ""
            checks.append(EnvironmentCheck("version", False, str(exc) or detail))
        if self.config.codex_home:
            found = _has_config(self.config.codex_home)
            checks.append(EnvironmentCheck("codex_home", found, "config.toml found" if found else "no config.toml"))
        auth = auth_source(env)
        checks.append(EnvironmentCheck("auth", bool(auth), auth or "no API key, login or model provider found"))
        messages = MESSAGES
        if version and _version_tuple(version) < _version_tuple(TESTED_VERSION):
            messages = replace(MESSAGES, boundaries=frozenset({Boundary.TURN_END}))
            checks.append(EnvironmentCheck("messages", True, f"in-run delivery needs Codex {TESTED_VERSION}+"))
        ok = all(c.ok for c in checks)
        return EnvironmentReport(
            driver="codex",
            status=EnvironmentStatus.OK if ok else EnvironmentStatus.DEGRADED,
            version=version,
            command=tuple(argv),
            auth_source=auth,
            checks=tuple(checks),
            messages=messages,
        )

    async def config_schema(self) -> ConfigSchema:
        """The JSON Schema of ``config.toml`` that the CLI publishes (``app-server generate-json-schema``)."""
        try:
            self.config.validate()
            argv = codex_command(self.config.command)
        except InvalidDriverConfigError as exc:
            return ConfigSchema(driver="codex", status=Availability.UNAVAILABLE, detail=str(exc))
        env = self._env(Invocation(run_id="config_schema", prompt=""))
        return await read_config_schema(argv, env, timeout=self.config.startup_timeout)

    async def list_models(self) -> list[ModelInfo]:
        """The models ``model/list`` reports (starts app-server briefly, no model task)."""
        cfg = self.config
        inv = Invocation(run_id="list_models", prompt="")
        server = await AppServer.spawn(
            self._argv(inv),
            env=self._env(inv),
            cwd=_absolute(cfg.cwd or os.getcwd()),
            client_name=cfg.client_name,
            client_version=_package_version(),
            startup_timeout=cfg.startup_timeout,
            route=OutputRoute(),
            grace=cfg.grace_period,
        )
        try:
            result = await server.rpc.request("model/list", {}, timeout=cfg.startup_timeout)
        finally:
            await server.close(cfg.grace_period)
        models: list[ModelInfo] = []
        for entry in (result or {}).get("data") or []:
            if isinstance(entry, dict) and entry.get("id"):
                name = str(entry.get("displayName") or entry["id"])
                models.append(ModelInfo(id=str(entry["id"]), name=name, default=bool(entry.get("isDefault"))))
        return models
