"""The Claude Code driver's configuration and its validation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...driver import (
    CommonConfig,
    InvalidDriverConfigError,
)

EFFORTS = ("low", "medium", "high", "xhigh", "max")
PERMISSION_MODES = ("default", "acceptEdits", "plan", "dontAsk", "auto")
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
class Config(CommonConfig):
    """How to run Claude Code.

    ``model`` and ``effort`` become ``--model``/``--effort``; ``max_turns_per_run`` caps the CLI's internal model
    steps per prompt (``--max-turns``, 0 = no cap); ``permission_mode`` is the CLI's starting mode (every tool it
    asks about still goes through the run's approvals); ``bare`` starts the CLI with ``--bare`` (three tools, a tiny
    system prompt, no hooks, plugins or CLAUDE.md); ``allowed_tools``/``disallowed_tools`` are permission rules.
    """

    model: str = ""
    effort: str = ""
    max_turns_per_run: int = 0
    permission_mode: str = "default"
    bare: bool = False
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    add_dirs: list[str] = field(default_factory=list)
    partial_messages: bool = True

    def validate(self) -> None:
        """Raise InvalidDriverConfigError naming the first bad field."""
        self.validate_common("claude")

        def bad(name: str, why: str) -> InvalidDriverConfigError:
            return InvalidDriverConfigError(f"claude.Config.{name}: {why}", option=name)

        if not isinstance(self.model, str) or self.model != self.model.strip():
            raise bad("model", f"must be a model name without surrounding spaces, got {self.model!r}")
        if self.effort and self.effort not in EFFORTS:
            raise bad("effort", f"must be one of {', '.join(EFFORTS)} (or empty), got {self.effort!r}")
        if (
            not isinstance(self.max_turns_per_run, int)
            or isinstance(self.max_turns_per_run, bool)
            or self.max_turns_per_run < 0
        ):
            raise bad("max_turns_per_run", f"must be an int >= 0 (0 = no cap), got {self.max_turns_per_run!r}")
        if self.permission_mode not in PERMISSION_MODES:
            hint = ""
            if self.permission_mode == "bypassPermissions":
                hint = " (bypassPermissions skips approvals entirely, so this driver does not offer it)"
            raise bad(
                "permission_mode",
                f"must be one of {', '.join(PERMISSION_MODES)}, got {self.permission_mode!r}{hint}",
            )
        if not isinstance(self.bare, bool):
            raise bad("bare", f"must be a bool, got {self.bare!r}")
        if not isinstance(self.partial_messages, bool):
            raise bad("partial_messages", f"must be a bool, got {self.partial_messages!r}")
        for name in ("allowed_tools", "disallowed_tools", "add_dirs"):
            value = getattr(self, name)
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                raise bad(name, f"must be a list of non-empty strings, got {value!r}")
        reserved = {
            "-p",
            "--print",
            "--input-format",
            "--output-format",
            "--permission-prompt-tool",
            "--resume",
            "-r",
            "--continue",
            "-c",
            "--fork-session",
            "--session-id",
            "--replay-user-messages",
            "--dangerously-skip-permissions",
            "--allow-dangerously-skip-permissions",
        }
        for arg in self.extra_args:
            if arg.split("=", 1)[0] in reserved:
                raise bad("extra_args", f"{arg!r} is managed by the driver and cannot be passed as an extra argument")


def config_key(config: Config) -> tuple[Any, ...]:
    """A snapshot of every field's value, equal for two configurations that validate and launch the same.

    Lists and dicts are copied (as tuples), so a field changed in place gives a different key.
    """
    values = [
        tuple(v) if type(v) is list else tuple(v.items()) if type(v) is dict else v for v in vars(config).values()
    ]
    return (type(config), *values)
