"""The Cursor Agent driver's configuration and its validation."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...driver import CommonConfig, InvalidDriverConfigError

DEFAULT_COMMAND = "agent"
MODES = ("agent", "ask", "plan")
INSTALL_HINT = (
    "Cursor Agent ships through its vendor's installer, not a package registry: run "
    "`curl https://cursor.com/install -fsS | bash`, put its `agent` (also called `cursor-agent`) on PATH, "
    "or pass Config(command=['/path/to/agent'])."
)
# Flags the driver manages itself; passing one through extra_args would contradict what the driver declares.
RESERVED_ARGS = frozenset(
    {
        "-p",
        "--print",
        "--output-format",
        "--stream-partial-output",
        "--workspace",
        "--resume",
        "--continue",
        "--model",
        "-m",
        "--mode",
        "--force",
        "-f",
        "--yolo",
        "--api-key",
    }
)


@dataclass(frozen=True)
class Config(CommonConfig):
    """How to run Cursor Agent.

    ``model`` becomes ``--model`` (empty: the CLI's default); ``mode`` is ``--mode`` (``agent``, ``ask`` or ``plan``;
    empty: the CLI's default, agent); ``partial_output`` adds ``--stream-partial-output`` so text arrives as deltas;
    ``trust`` adds ``--trust`` (headless runs must trust the workspace); ``hook_relay`` is the argv of the hook relay
    for tool-boundary delivery (``default_hook_relay()``, or a host's own program that calls
    ``run_hook_relay_if_requested()`` first): with it, supplemental input reaches a running turn at its next tool
    call; without it (the default) input waits for the turn's end and continues by resuming the session.
    ``CURSOR_API_KEY`` belongs in ``secret_env``.
    """

    model: str = ""
    mode: str = ""
    partial_output: bool = True
    trust: bool = True
    hook_relay: list[str] = field(default_factory=list)

    def validate(self) -> None:
        """Raise InvalidDriverConfigError naming the first bad field."""
        self.validate_common("cursor")

        def bad(name: str, why: str) -> InvalidDriverConfigError:
            return InvalidDriverConfigError(f"cursor.Config.{name}: {why}", option=name)

        if not isinstance(self.model, str) or self.model != self.model.strip() or self.model.startswith("-"):
            raise bad("model", f"must be a model name without surrounding spaces, got {self.model!r}")
        if self.mode and self.mode not in MODES:
            raise bad("mode", f"must be one of {', '.join(MODES)} (or empty for the CLI's default), got {self.mode!r}")
        for name in ("partial_output", "trust"):
            if not isinstance(getattr(self, name), bool):
                raise bad(name, f"must be a bool, got {getattr(self, name)!r}")
        if not isinstance(self.hook_relay, list) or not all(isinstance(a, str) and a for a in self.hook_relay):
            raise bad("hook_relay", f"must be a list of non-empty strings (an argv), got {self.hook_relay!r}")
        for arg in self.extra_args:
            if arg.split("=", 1)[0] in RESERVED_ARGS:
                raise bad("extra_args", f"{arg!r} is managed by the driver and cannot be passed as an extra argument")
