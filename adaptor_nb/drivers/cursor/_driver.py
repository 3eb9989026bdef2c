"""The Cursor Agent driver: descriptor, validation, one process per turn, inspection."""

from __future__ import annotations

import contextlib
import json
import os
import socket
from dataclasses import replace
from typing import Any

from ...driver import (
    Boundary,
    ContinueMode,
    Descriptor,
    DriverOutcome,
    EnvironmentCheck,
    EnvironmentReport,
    IdentityCodec,
    Invocation,
    MessageCapabilities,
    ModelInfo,
    Notice,
    NoticeKind,
    RunContext,
    StreamCapability,
    StructuredOutputCapabilities,
    capture_output,
    probe_cli,
    resolve_command,
)
from ._approvals import APPROVALS
from ._command import Launch, build_launch, config_fingerprint
from ._config import DEFAULT_COMMAND, INSTALL_HINT, Config
from ._mcp import TRANSPORTS as MCP_TRANSPORTS
from ._mcp import project_servers
from ._process import CursorProcess
from ._relay import HookRelay, hook_permission, relay_hooks
from ._session import PROVIDER, CursorTurn

# Print mode reads stdin once, so input cannot reach a running turn: queued SOON and AFTER_TURN messages start the
# next turn by resuming the session (the core's ContinueMode.RESUME); INTERRUPT is not declared, so it is refused.
MESSAGES = MessageCapabilities(
    boundaries=frozenset({Boundary.TURN_END}),
    interrupt=False,
    continue_mode=ContinueMode.RESUME,
)
# With the hook relay (Config.hook_relay), input also reaches a running turn at its next tool boundary.
RELAYED_MESSAGES = replace(MESSAGES, boundaries=frozenset({Boundary.IN_RUN, Boundary.TURN_END}))
HOOK_NOTICE = (
    "Cursor hooks are unavailable to this driver (no hook_relay configured): supplemental input is delivered at turn "
    "end by resuming the session"
)


class Driver:
    """Runs Cursor Agent (``agent -p --output-format stream-json``), a fresh process for every turn.

    Example::

        from adaptor_nb.drivers import cursor
        agent = Agent(cursor.Driver(cursor.Config(model="gpt-5", secret_env={"CURSOR_API_KEY": key})))
    """

    session_codec = IdentityCodec()

    def __init__(self, config: Config | None = None, **fields: Any) -> None:
        cfg = config if config is not None else Config()
        if not isinstance(cfg, Config):
            raise TypeError(f"cursor.Driver() takes a cursor.Config, got {type(cfg).__name__}")
        if fields:
            cfg = replace(cfg, **fields)
        self.config = cfg

    @property
    def name(self) -> str:
        return "cursor"

    def __repr__(self) -> str:
        c = self.config
        parts = [f"model={c.model!r}"] if c.model else []
        if c.mode:
            parts.append(f"mode={c.mode!r}")
        if c.command:
            parts.append(f"command={c.command[0]!r}")
        if c.secret_env:
            parts.append(f"secret_env=<{len(c.secret_env)} hidden>")
        return f"cursor.Driver({', '.join(parts)})"

    def descriptor(self) -> Descriptor:
        return Descriptor(
            name="cursor",
            provider=PROVIDER,
            messages=self._messages(),
            approvals=APPROVALS,
            structured_output=StructuredOutputCapabilities(native=False, prompted=True),
            resume=True,
            fork=False,
            persistent=False,
            mcp=MCP_TRANSPORTS,
            host_tools=True,
        )

    def _messages(self) -> MessageCapabilities:
        return RELAYED_MESSAGES if self.config.hook_relay else MESSAGES

    def validate_config(self) -> None:
        """Raise InvalidDriverConfigError for a bad field or a CLI that cannot be found."""
        self.config.validate()
        self.command()

    def command(self) -> list[str]:
        """The CLI argv prefix (Config.command, or ``agent`` found on PATH)."""
        return resolve_command(self.config.command, DEFAULT_COMMAND, INSTALL_HINT, "cursor")

    def config_fingerprint(self) -> str:
        return config_fingerprint(self.config)

    # -- runs --------------------------------------------------------------------------------------------

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        self.validate_config()
        launch = build_launch(self.config, self.command(), invocation)
        async with contextlib.AsyncExitStack() as stack:
            if ctx.messages is not None and self.config.hook_relay:
                relay = await stack.enter_async_context(HookRelay(ctx.messages, hook_permission(invocation.policy)))
                launch.env.update(relay.env)
                stack.enter_context(relay_hooks(launch.cwd, self.config.hook_relay))
            elif ctx.messages is not None:
                await ctx.emit(
                    Notice(
                        kind=NoticeKind.LIFECYCLE.value,
                        text=HOOK_NOTICE,
                        metadata={"code": "cursor_hook_unavailable", "fallback": "turn_end_resume"},
                    )
                )
            return await self._turn(launch, invocation, ctx)

    async def _turn(self, launch: Launch, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        with project_servers(launch.cwd, invocation.mcp, invocation.tools):
            proc = await CursorProcess.start(launch, ctx.raw_stderr, self.config.max_line_bytes)
            turn = CursorTurn(
                proc,
                ctx,
                partial=self.config.partial_output,
                model=invocation.model or self.config.model,
                grace=self.config.grace_period,
                resume=launch.resume,
                thread_key=invocation.thread_key,
                hosted=invocation.tools,
            )
            outcome = await turn.execute()
        outcome.checkpoint_data["workspace"] = launch.cwd
        outcome.checkpoint_data["mode"] = self.config.mode or "agent"
        return outcome

    # -- inspection --------------------------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.config.env)
        env.update(self.config.secret_env)
        return env

    def _auth_source(self) -> str:
        env = self._env()
        if env.get("CURSOR_API_KEY"):
            return "CURSOR_API_KEY"
        home = env.get("HOME", os.path.expanduser("~"))
        config_home = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        for path in (os.path.join(config_home, "cursor", "auth.json"), os.path.join(home, ".cursor", "auth.json")):
            if os.path.isfile(path):
                return "cursor login"
        return ""

    async def probe_environment(self) -> EnvironmentReport:
        """CLI found, its version and the credentials, without starting a model task."""

        def command() -> list[str]:
            self.config.validate()
            return self.command()

        return await probe_cli(
            "cursor",
            command,
            self._env(),
            timeout=self.config.startup_timeout,
            auth=self._auth_source(),
            no_auth="no CURSOR_API_KEY and no `agent login` found",
            messages=self._messages(),
            extra=[self._hooks_check()],
        )

    # -- optional interfaces (section 15) ------------------------------------------------------------------

    async def resolve_message_capabilities(self, declared: MessageCapabilities) -> MessageCapabilities:
        """MessageCapabilityResolver: the hook relay needs a Unix socket; where there is none, in-run delivery is
        narrowed away for the run and input waits for the turn's end."""
        if Boundary.IN_RUN in declared.boundaries and not hasattr(socket, "AF_UNIX"):
            return MESSAGES
        return declared

    def stream_capability(self) -> StreamCapability:
        """StreamSupport: stream-json frames; text deltas with ``partial_output``, whole tool arguments, no
        approval requests (print mode cannot ask)."""
        partial = self.config.partial_output
        return StreamCapability(native=True, token_level=partial, reasoning=True, tool_call_args=False, hitl=False)

    def _hooks_check(self) -> EnvironmentCheck:
        if self.config.hook_relay:
            return EnvironmentCheck("hooks", True, f"hook relay: {' '.join(self.config.hook_relay)}")
        return EnvironmentCheck("hooks", False, HOOK_NOTICE)

    async def list_models(self) -> list[ModelInfo]:
        """The models ``agent models`` lists (no model request is made); empty when the CLI lists none."""
        self.config.validate()
        try:
            out = await capture_output([*self.command(), "models"], self._env(), timeout=self.config.startup_timeout)
        except (OSError, TimeoutError):
            return []
        return parse_models(out)


def parse_models(out: str) -> list[ModelInfo]:
    """Model lines as ``id``, ``id - Name`` or ``id (default)``; a JSON list of ``{"id", "name"}`` also works."""
    text = out.strip()
    if text.startswith("["):
        try:
            rows = json.loads(text)
        except ValueError:
            rows = []
        return [
            ModelInfo(id=str(r["id"]), name=str(r.get("name") or r["id"]), default=bool(r.get("default")))
            for r in rows
            if isinstance(r, dict) and r.get("id")
        ]
    models: list[ModelInfo] = []
    for line in text.splitlines():
        line = line.strip().lstrip("*-• ").strip()
        if not line or line.endswith(":") or " " in line.split(" - ", 1)[0].replace(" (default)", ""):
            continue
        default = "(default)" in line or "(current)" in line
        line = line.replace("(default)", "").replace("(current)", "").strip()
        ident, _, name = line.partition(" - ")
        models.append(ModelInfo(id=ident.strip(), name=name.strip() or ident.strip(), default=default))
    return models


__all__ = ["Driver", "parse_models"]
