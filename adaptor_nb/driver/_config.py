"""Configuration shared by every built-in CLI driver, with validation that names the bad field."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .._errors import InvalidDriverConfigError
from . import _tap

MAX_LINE_BYTES = 64 << 20  # the default bound of one stdout line (CommonConfig.max_line_bytes)
MIN_LINE_BYTES = 1 << 20  # the smallest bound accepted: above every read size of the process reader (64 KiB)


@dataclass(frozen=True)
class CommonConfig:
    """Fields every CLI driver takes.

    ``command`` is the CLI argv prefix (default: found on PATH); ``env`` is added to the process environment;
    ``secret_env`` reaches the process but never events, transcripts or reprs, nor does any environment value
    under a name that says KEY, TOKEN, SECRET or PASSWORD unless ``public_env`` names it; timeouts are seconds;
    ``max_line_bytes`` bounds one stdout line (a longer one stops the process and fails the run, naming it).
    """

    command: list[str] | None = None
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    secret_env: dict[str, str] = field(default_factory=dict, repr=False)
    public_env: list[str] = field(default_factory=list)
    instructions: str = ""
    startup_timeout: float = 60.0
    idle_timeout: float | None = None
    grace_period: float = 2.0
    extra_args: list[str] = field(default_factory=list)
    max_line_bytes: int = MAX_LINE_BYTES

    def validate_common(self, driver: str) -> None:
        """Raise InvalidDriverConfigError for the first bad field."""

        def bad(name: str, why: str) -> InvalidDriverConfigError:
            return InvalidDriverConfigError(f"{driver}.Config.{name}: {why}", option=name)

        if self.command is not None and (
            not isinstance(self.command, list) or not self.command or not all(isinstance(a, str) for a in self.command)
        ):
            raise bad("command", f"must be a non-empty list of strings, got {self.command!r}")
        if self.cwd is not None and not os.path.isdir(self.cwd):
            raise bad("cwd", f"{self.cwd!r} is not a directory")
        for name, mapping in (("env", self.env), ("secret_env", self.secret_env)):
            if not isinstance(mapping, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()
            ):
                raise bad(name, "must map strings to strings")
        if not isinstance(self.public_env, list) or not all(isinstance(n, str) for n in self.public_env):
            raise bad("public_env", "must be a list of environment variable names")
        for name, value in (("startup_timeout", self.startup_timeout), ("grace_period", self.grace_period)):
            if not isinstance(value, int | float) or value <= 0:
                raise bad(name, f"must be a positive number of seconds, got {value!r}")
        if self.idle_timeout is not None and (not isinstance(self.idle_timeout, int | float) or self.idle_timeout <= 0):
            raise bad("idle_timeout", f"must be None or a positive number of seconds, got {self.idle_timeout!r}")
        if not isinstance(self.extra_args, list) or not all(isinstance(a, str) for a in self.extra_args):
            raise bad("extra_args", "must be a list of strings")
        if type(self.max_line_bytes) is not int or self.max_line_bytes < MIN_LINE_BYTES:
            raise bad(
                "max_line_bytes", f"must be a whole number of bytes >= {MIN_LINE_BYTES}, got {self.max_line_bytes!r}"
            )


def resolve_command(command: list[str] | None, default: str, install_hint: str, driver: str) -> list[str]:
    """The argv prefix to run: ``command`` if given, else ``default`` found on PATH; a clear error otherwise."""
    exe = (command or [default])[0]
    if _tap.replaying():
        return list(command) if command else [default]  # a replayed run plays recorded frames: no CLI is run
    if command:
        if os.path.sep in exe:
            if not os.access(exe, os.X_OK):
                raise InvalidDriverConfigError(
                    f"{driver}: command {exe!r} is not an executable file. {install_hint}", option="command"
                )
            return list(command)
        found = _which(exe)
        if not found:
            raise InvalidDriverConfigError(
                f"{driver}: command {exe!r} was not found on PATH. {install_hint}", option="command"
            )
        return [found, *command[1:]]
    found = _which(default)
    if not found:
        raise InvalidDriverConfigError(
            f"{driver}: the {default!r} CLI was not found on PATH. {install_hint}", option="command"
        )
    return [found]


_FOUND: dict[tuple[str, str | None], str] = {}


def _which(name: str) -> str | None:
    """``shutil.which(name)``, remembered for the PATH it was found on while the file found stays executable.

    A Thread sends many prompts; the search walks every PATH entry, the check of a remembered hit is one
    ``access``. A name not found is searched for again each time (it may have been installed since)."""
    key = (name, os.environ.get("PATH"))
    found = _FOUND.get(key)
    if found is not None and os.access(found, os.X_OK) and not os.path.isdir(found):
        return found
    import shutil  # loaded when a CLI is looked up, not with the driver door

    found = shutil.which(name)
    if found is None:
        _FOUND.pop(key, None)
    else:
        if len(_FOUND) >= 64:
            _FOUND.clear()
        _FOUND[key] = found
    return found
