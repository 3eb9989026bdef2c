"""The Codex driver's configuration and its validation before launch."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from ...driver import (
    CommonConfig,
    DriverFailure,
    InvalidDriverConfigError,
    Notice,
    ProcessInfo,
    TranscriptItem,
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
    Codex puts in its user agent; ``connect_timeout`` bounds how long a turn may keep reconnecting to the model
    endpoint ("Reconnecting... waiting for network") before the run fails saying so (None: as long as Codex tries).
    """

    model: str = ""
    reasoning_effort: str = ""
    fast_mode: bool = False
    codex_home: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    client_name: str = "adaptor_nb"
    connect_timeout: float | None = 30.0

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
        if self.connect_timeout is not None and (
            isinstance(self.connect_timeout, bool)
            or not isinstance(self.connect_timeout, int | float)
            or not self.connect_timeout > 0
        ):
            raise bad("connect_timeout", f"must be None or a positive number of seconds, got {self.connect_timeout!r}")
        if not isinstance(self.client_name, str) or not _CLIENT_NAME.match(self.client_name):
            raise bad("client_name", f"must be 1-64 letters, digits, '.', '_' or '-', got {self.client_name!r}")
        for arg in self.extra_args:
            if arg.split("=", 1)[0] in _RESERVED_ARGS:
                raise bad("extra_args", f"{arg!r} is managed by the driver (it talks to app-server over stdio)")


def reconnect_watch(since: tuple[float, str] | None, event: object, now: float) -> tuple[float, str] | None:
    """Track a run of Codex retry notices: started at the first one, over at the next event of another kind.

    Warnings do not end it (Codex prints them while it waits); the result is ``(time of the first retry, its
    text)`` or None when the connection is fine.
    """
    if isinstance(event, TranscriptItem | ProcessInfo):
        return since
    code = event.metadata.get("code") if isinstance(event, Notice) else None
    if code == "codex_retry":
        return since if since is not None else (now, getattr(event, "text", "") or "reconnecting")
    return since if code == "codex_warning" else None


def give_up_reconnecting(timeout: float, notice: str, stderr_tail: str) -> DriverFailure:
    """The failure of a turn that kept reconnecting past ``Config.connect_timeout``."""
    return DriverFailure(
        f"Codex could not reach the model endpoint: it kept reconnecting for {timeout:g} s ({notice!r}); check the "
        "network, the API key (OPENAI_API_KEY, `codex login` or the model provider's env_key) and the provider's "
        "base_url, or raise codex.Config.connect_timeout",
        details={"connect_timeout": timeout, "notice": notice, "stderr_tail": stderr_tail},
        retryable=True,
    )
