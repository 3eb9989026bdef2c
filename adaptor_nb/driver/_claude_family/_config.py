"""The configuration fields every Claude-family driver takes, and their validation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..._errors import InvalidDriverConfigError
from .._config import CommonConfig

EFFORTS = ("low", "medium", "high", "xhigh", "max")
PERMISSION_MODES = ("default", "acceptEdits", "plan", "dontAsk", "auto")
# Flags every family driver manages itself: passing them again would break the protocol or the session bookkeeping.
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
        "--dangerously-skip-permissions",
    }
)


@dataclass(frozen=True)
class ClaudeFamilyConfig(CommonConfig):
    """Fields of a Claude-family CLI: ``model`` and ``effort`` (``--model``/``--effort``), ``max_turns_per_run``
    (``--max-turns``, 0 = no cap), ``permission_mode`` (the CLI's starting mode; ``bypassPermissions`` is not
    offered: it skips approvals entirely), ``allowed_tools``/``disallowed_tools`` (permission rules), ``add_dirs``
    and ``partial_messages`` (stream text as it is generated).

    A driver's own Config sets ``DRIVER`` (its name in messages) and ``RESERVED_ARGS`` (flags the driver manages:
    the family's ``RESERVED_ARGS`` and the CLI's own).
    """

    DRIVER: ClassVar[str] = ""
    RESERVED_ARGS: ClassVar[frozenset[str]] = RESERVED_ARGS

    model: str = ""
    effort: str = ""
    max_turns_per_run: int = 0
    permission_mode: str = "default"
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    add_dirs: list[str] = field(default_factory=list)
    partial_messages: bool = True

    def _bad(self, name: str, why: str) -> InvalidDriverConfigError:
        """The error that names field ``name``."""
        return InvalidDriverConfigError(f"{self.DRIVER}.Config.{name}: {why}", option=name)

    def validate(self) -> None:
        """Raise InvalidDriverConfigError naming the first bad field."""
        self.validate_common(self.DRIVER)
        bad = self._bad
        if not isinstance(self.model, str) or self.model != self.model.strip():
            raise bad("model", f"must be a model name without surrounding spaces, got {self.model!r}")
        if self.effort and self.effort not in EFFORTS:
            raise bad("effort", f"must be one of {', '.join(EFFORTS)} (or empty), got {self.effort!r}")
        turns = self.max_turns_per_run
        if not isinstance(turns, int) or isinstance(turns, bool) or turns < 0:
            raise bad("max_turns_per_run", f"must be an int >= 0 (0 = no cap), got {turns!r}")
        if self.permission_mode not in PERMISSION_MODES:
            hint = ""
            if self.permission_mode == "bypassPermissions":
                hint = " (bypassPermissions skips approvals entirely, so this driver does not offer it)"
            raise bad(
                "permission_mode",
                f"must be one of {', '.join(PERMISSION_MODES)}, got {self.permission_mode!r}{hint}",
            )
        self.validate_own()
        if not isinstance(self.partial_messages, bool):
            raise bad("partial_messages", f"must be a bool, got {self.partial_messages!r}")
        for name in ("allowed_tools", "disallowed_tools", "add_dirs"):
            value = getattr(self, name)
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                raise bad(name, f"must be a list of non-empty strings, got {value!r}")
        for arg in self.extra_args:
            if arg.split("=", 1)[0] in self.RESERVED_ARGS:
                raise bad("extra_args", f"{arg!r} is managed by the driver and cannot be passed as an extra argument")

    def validate_own(self) -> None:
        """Check the driver's own fields (none here)."""

    def own_flags(self) -> list[str]:
        """The driver's own fields as CLI flags (none here)."""
        return []

    def fingerprint_fields(self) -> dict[str, Any]:
        """What about the configuration makes a saved session incompatible (no secrets, no paths to binaries)."""
        return {
            "driver": self.DRIVER,
            "permission_mode": self.permission_mode,
            "allowed_tools": sorted(self.allowed_tools),
            "disallowed_tools": sorted(self.disallowed_tools),
            "add_dirs": list(self.add_dirs),
            "extra_args": list(self.extra_args),
            "instructions": self.instructions,
            "effort": self.effort,
            "max_turns_per_run": self.max_turns_per_run,
        }


def config_key(config: ClaudeFamilyConfig) -> tuple[Any, ...]:
    """A snapshot of every field's value, equal for two configurations that validate and launch the same.

    Lists and dicts are copied (as tuples), so a field changed in place gives a different key.
    """
    values = [
        tuple(v) if type(v) is list else tuple(v.items()) if type(v) is dict else v for v in vars(config).values()
    ]
    return (type(config), *values)
