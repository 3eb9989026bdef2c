"""The CodeBuddy Code driver: the Claude family's engine with CodeBuddy's profile, descriptor and credentials."""

from __future__ import annotations

import os
import re
from typing import Any

from ...driver import (
    ClaudeFamilyDriver,
    ClaudeFamilyProfile,
    InvalidDriverConfigError,
    ModelInfo,
    ProfileLayout,
    resolve_command,
)
from ._config import INSTALL_HINT, Config
from ._locate import find_codebuddy
from ._profile import codebuddy_layout
from ._session import CodeBuddyRun
from ._translate import FrameTranslator

SECRET_ENVS = ("CODEBUDDY_API_KEY", "CODEBUDDY_AUTH_TOKEN")
# What keeps the CLI off the network and quiet: no telemetry, no marketplace or update checks, no memory reminder.
SILENT_ENV = {
    "DISABLE_TELEMETRY": "1",
    "CODEBUDDY_SKIP_BUILTIN_MARKETPLACE": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CODEBUDDY_DISABLE_AUTO_MEMORY": "1",
    "CODEBUDDY_CODE_ENTRYPOINT": "sdk-py",
}
_ANON = re.compile(rb"anonymous_[^\"\\\s,]*").sub


def _redact_accounts(chunk: bytes) -> bytes:
    """The CLI's account names carry its API key's tail."""
    return _ANON(b"anonymous_<redacted>", chunk) if b"anonymous_" in chunk else chunk


PROFILE = ClaudeFamilyProfile(
    name="codebuddy",
    label="CodeBuddy Code",
    short="CodeBuddy",
    provider="codebuddy",
    protocol_args=("--setting-sources", "none"),
    stripped_env=("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT", "CODEBUDDY_CODE_ENTRYPOINT"),
    silent_env=SILENT_ENV,
    echoes_input=False,  # no --replay-user-messages: a written line counts as delivered
    # SOON goes into the running turn through the ``steer`` control request (a user line written mid-turn would
    # start a parallel session), AFTER_TURN as the next user line, INTERRUPT through the ``interrupt`` request.
    steers=True,
    allowed_key=True,
    settle_after_result=0.3,  # the CLI re-runs or drops a user line written right after a ``result``
    # The first control request: a prompt follows, and AskUserQuestion may be offered to the model.
    initialize={
        "subtype": "initialize",
        "hooks": None,
        "systemPrompt": None,
        "appendSystemPrompt": None,
        "agents": None,
        "sdkMcpServers": None,
        "hasPrompt": True,
        "capabilities": {"askUserQuestion": True},
    },
    interrupt_opens_turn=True,
    asks_for_allowed_tools=True,  # CodeBuddy asks about MCP tools although ``--allowedTools`` names them
    list_models_args=("--setting-sources", "none"),
    install_hint=INSTALL_HINT,
    no_auth="no API key, auth token or login found",
    min_version="2.163.0",
    redact=_redact_accounts,
)


class Driver(ClaudeFamilyDriver):
    """Runs CodeBuddy Code (``codebuddy-headless`` with stream-json on both sides); one persistent process per Thread.

    The Claude family's engine with CodeBuddy's profile; its own run (``CodeBuddyRun``) adds plan review, the turns
    the CLI ends without a result and the recovery of a structured answer from its fallback StructuredOutput tool.
    The CLI is found by ``find_codebuddy`` unless ``Config.command`` names it; its API key never shows in output.

    Example::

        from adaptor_nb.drivers import codebuddy
        agent = Agent(codebuddy.Driver(codebuddy.Config(model="default-model")), workspace="/repo")
    """

    CONFIG = Config
    PROFILE = PROFILE
    TRANSLATOR = FrameTranslator
    RUN = CodeBuddyRun
    config: Config

    # CLI 2.163.0 checks host-tool arguments against the input schema itself: it coerces what it can ({"key": 5}
    # arrives as "5") and answers the rest with its own error result, so those calls never reach the host.
    cli_host_tool_validation = "Parameter validation failed"

    def command(self) -> list[str]:
        """The CLI argv prefix (Config.command, or the CLI found by ``find_codebuddy``)."""
        if self.config.command:
            return resolve_command(self.config.command, "codebuddy-headless", INSTALL_HINT, "codebuddy")
        found = find_codebuddy()
        if found is None:
            raise InvalidDriverConfigError(f"codebuddy: CodeBuddy Code was not found. {INSTALL_HINT}", option="command")
        return [found]

    def secrets(self, env: dict[str, str]) -> tuple[str, ...]:
        values = [env.get(k, "") for k in SECRET_ENVS]
        return tuple(v for v in (*values, *self.config.secret_env.values()) if v)

    def profile_layout(self) -> ProfileLayout:
        """Where this driver's CLI keeps its profile, for ``profile=`` and skills (no process is started)."""
        return codebuddy_layout(self.env())

    def auth_source(self) -> str:
        env = self.env()
        for key in SECRET_ENVS:
            if env.get(key):
                return key if env.get("CODEBUDDY_BASE_URL") else f"{key} (no CODEBUDDY_BASE_URL: the vendor service)"
        home = env.get("CODEBUDDY_CONFIG_DIR") or os.path.join(env.get("HOME", os.path.expanduser("~")), ".codebuddy")
        if os.path.exists(os.path.join(home, "models.json")):
            return "models.json"
        return ""

    def models_of(self, body: dict[str, Any]) -> list[ModelInfo]:
        current = body.get("currentModelId")
        out: list[ModelInfo] = []
        for m in body.get("models") or []:
            if isinstance(m, dict) and isinstance(m.get("id"), str):
                out.append(ModelInfo(id=m["id"], name=str(m.get("name") or m["id"]), default=m["id"] == current))
        return out


__all__ = ["Driver"]
