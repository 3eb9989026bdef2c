"""The CodeBuddy Code driver's configuration and its validation."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...driver import (
    CommonConfig,
    InvalidDriverConfigError,
)

EFFORTS = ("low", "medium", "high", "xhigh", "max")
PERMISSION_MODES = ("default", "acceptEdits", "plan", "dontAsk", "auto")
INSTALL_HINT = (
    "Install CodeBuddy Code with `pip install 'adaptor_nb[codebuddy]'` (the codebuddy-agent-sdk wheel bundles the "
    "CLI), set CODEBUDDY_CODE_PATH, or pass Config(command=['/path/to/codebuddy-headless'])."
)
# Flags the driver itself manages: passing them again would break the protocol or the session bookkeeping.
RESERVED_ARGS = frozenset(
    {
        "-p",
        "--print",
        "--input-format",
        "--output-format",
        "--resume",
        "-r",
        "--continue",
        "-c",
        "--fork-session",
        "--session-id",
        "--replay-user-messages",
        "--setting-sources",
        "--dangerously-skip-permissions",
        "-y",
        "--acp",
        "--serve",
    }
)


@dataclass(frozen=True)
class Config(CommonConfig):
    """How to run CodeBuddy Code.

    ``model`` and ``effort`` become ``--model``/``--effort``; ``max_turns_per_run`` is passed as ``--max-turns``
    (0 = no cap; this CLI version does not enforce it for tool turns); ``permission_mode`` is the CLI's starting
    mode (``bypassPermissions`` is not offered: it skips approvals entirely); ``allowed_tools``/``disallowed_tools``
    are permission rules.
    """

    model: str = ""
    effort: str = ""
    max_turns_per_run: int = 0
    permission_mode: str = "default"
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    add_dirs: list[str] = field(default_factory=list)
    partial_messages: bool = True

    def validate(self) -> None:
        """Raise InvalidDriverConfigError naming the first bad field."""
        self.validate_common("codebuddy")

        def bad(name: str, why: str) -> InvalidDriverConfigError:
            return InvalidDriverConfigError(f"codebuddy.Config.{name}: {why}", option=name)

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
        if not isinstance(self.partial_messages, bool):
            raise bad("partial_messages", f"must be a bool, got {self.partial_messages!r}")
        for name in ("allowed_tools", "disallowed_tools", "add_dirs"):
            value = getattr(self, name)
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                raise bad(name, f"must be a list of non-empty strings, got {value!r}")
        for arg in self.extra_args:
            if arg.split("=", 1)[0] in RESERVED_ARGS:
                raise bad("extra_args", f"{arg!r} is managed by the driver and cannot be passed as an extra argument")
