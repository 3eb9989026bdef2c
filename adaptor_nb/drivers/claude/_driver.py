"""The Claude Code driver: the Claude family's engine with Claude Code's profile, descriptor and credentials."""

from __future__ import annotations

import os
from typing import Any

from ...driver import (
    ClaudeFamilyDriver,
    ClaudeFamilyProfile,
    HostedTools,
    ProfileLayout,
    resolve_command,
)
from ._config import CREDENTIALS_HINT, INSTALL_HINT, Config, explain_login
from ._mcp import mcp_args
from ._profile import claude_layout
from ._translate import FrameTranslator

PROFILE = ClaudeFamilyProfile(
    name="claude",
    label="Claude Code",
    short="Claude",
    provider="anthropic",
    protocol_args=("--replay-user-messages", "--permission-prompt-tool", "stdio"),
    install_hint=INSTALL_HINT,
    no_auth=CREDENTIALS_HINT,
    min_version="2.1.0",
    host_tools_channel=True,
    explain=explain_login,
)
MESSAGES = PROFILE.messages


class Driver(ClaudeFamilyDriver):
    """Runs Claude Code (stream-json on both sides); one persistent process per Thread.

    Example::

        from adaptor_nb.drivers import claude
        agent = Agent(claude.Driver(claude.Config(model="sonnet")), workspace="/repo")
    """

    CONFIG = Config
    PROFILE = PROFILE
    TRANSLATOR = FrameTranslator
    config: Config

    def mcp_args(self, servers: Any, hosted: HostedTools | None) -> tuple[list[str], dict[str, str]]:
        """MCP servers as ``--mcp-config``, with the host tools as an SDK server on the control channel."""
        return mcp_args(servers, hosted)

    def command(self) -> list[str]:
        """The CLI argv prefix (Config.command, or ``claude`` found on PATH)."""
        return resolve_command(self.config.command, "claude", INSTALL_HINT, "claude")

    def profile_layout(self) -> ProfileLayout:
        """Where this driver's CLI keeps its profile, for ``profile=`` and skills (no process is started)."""
        return claude_layout(self.env())

    def auth_source(self) -> str:
        env = self.env()
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


__all__ = ["Driver"]
