"""The Codex driver's configuration and its validation before launch."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from ...driver import (
    CommonConfig,
    InvalidDriverConfigError,
)
from ._home import config_overrides

REASONING_EFFORTS = frozenset({"none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra"})
_CLIENT_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
# app-server arguments the driver owns: a transport other than stdio would cut the driver off its own process.
_RESERVED_ARGS = ("--listen",)


@dataclass(frozen=True)
class Config(CommonConfig):
    """Settings of the Codex driver.

    ``model`` and ``reasoning_effort`` apply to every turn (a per-call ``model=`` wins); ``fast_mode`` asks for the
    fast service tier; ``codex_home`` becomes ``CODEX_HOME``; ``config`` holds Codex settings passed as
    ``-c key=value`` overrides (nested mappings become dotted keys); ``client_name`` is the ``clientInfo`` name
    Codex puts in its user agent.
    """

    model: str = ""
    reasoning_effort: str = ""
    fast_mode: bool = False
    codex_home: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    client_name: str = "adaptor_nb"

    def validate(self) -> None:
        """Raise InvalidDriverConfigError naming the first bad field."""
        self.validate_common("codex")

        def bad(name: str, why: str) -> InvalidDriverConfigError:
            return InvalidDriverConfigError(f"codex.Config.{name}: {why}", option=name)

        if not isinstance(self.model, str) or self.model != self.model.strip():
            raise bad("model", f"must be a model name without surrounding spaces, got {self.model!r}")
        if not isinstance(self.reasoning_effort, str) or (
            self.reasoning_effort and self.reasoning_effort not in REASONING_EFFORTS
        ):
            allowed = ", ".join(sorted(REASONING_EFFORTS))
            raise bad("reasoning_effort", f"must be empty or one of {allowed}; got {self.reasoning_effort!r}")
        if not isinstance(self.fast_mode, bool):
            raise bad("fast_mode", f"must be True or False, got {self.fast_mode!r}")
        if self.codex_home is not None and (not isinstance(self.codex_home, str) or not os.path.isdir(self.codex_home)):
            raise bad("codex_home", f"{self.codex_home!r} is not an existing directory")
        if not isinstance(self.config, dict) or not all(isinstance(k, str) and k for k in self.config):
            raise bad("config", "must map non-empty setting names to values")
        try:
            config_overrides(self.config)
        except TypeError as exc:
            raise bad("config", f"holds a value that is not a TOML value ({exc})") from None
        if not isinstance(self.client_name, str) or not _CLIENT_NAME.match(self.client_name):
            raise bad("client_name", f"must be 1-64 letters, digits, '.', '_' or '-', got {self.client_name!r}")
        for arg in self.extra_args:
            if arg.split("=", 1)[0] in _RESERVED_ARGS:
                raise bad("extra_args", f"{arg!r} is managed by the driver (it talks to app-server over stdio)")
