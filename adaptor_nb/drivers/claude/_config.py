"""The Claude Code driver's configuration and its validation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...driver import ClaudeFamilyConfig

INSTALL_HINT = (
    "Install Claude Code with `npm install @anthropic-ai/claude-code` (or `bash scripts/setup.sh` in this repo) "
    "and put its `claude` on PATH, or pass Config(command=['/path/to/claude'])."
)

CREDENTIALS_HINT = (
    "Claude Code has no credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN; "
    "CLAUDE_CODE_USE_BEDROCK=1 or CLAUDE_CODE_USE_VERTEX=1 with that cloud's settings) in the environment or in "
    "Config(secret_env=...), or sign in once by running `claude` in a terminal"
)


def explain_login(message: str) -> str:
    """The CLI's "Not logged in · Please run /login" (which only works in its interactive UI) made actionable."""
    if "not logged in" in message.lower() or "/login" in message:
        return f"{CREDENTIALS_HINT} (the CLI said: {message.strip()})"
    return message


@dataclass(frozen=True)
class Config(ClaudeFamilyConfig):
    """How to run Claude Code.

    ``model`` and ``effort`` become ``--model``/``--effort``; ``max_turns_per_run`` caps the CLI's internal model
    steps per prompt (``--max-turns``, 0 = no cap); ``permission_mode`` is the CLI's starting mode (every tool it
    asks about still goes through the run's approvals); ``bare`` starts the CLI with ``--bare`` (three tools, a tiny
    system prompt, no hooks, plugins or CLAUDE.md); ``allowed_tools``/``disallowed_tools`` are permission rules.
    """

    DRIVER = "claude"
    RESERVED_ARGS = ClaudeFamilyConfig.RESERVED_ARGS | {
        "--permission-prompt-tool",
        "--allow-dangerously-skip-permissions",
    }

    bare: bool = False

    def validate_own(self) -> None:
        if not isinstance(self.bare, bool):
            raise self._bad("bare", f"must be a bool, got {self.bare!r}")

    def own_flags(self) -> list[str]:
        return ["--bare"] if self.bare else []

    def fingerprint_fields(self) -> dict[str, Any]:
        return {**super().fingerprint_fields(), "bare": self.bare}
