"""The ACP driver's configuration and its validation before launch."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...driver import CommonConfig, InvalidDriverConfigError


@dataclass(frozen=True)
class Config(CommonConfig):
    """Settings of the ACP driver.

    ``command`` is the agent's argv (required: ACP agents have no common binary name; ``preset()`` fills it);
    ``name`` names the agent in events and results (default: the binary's name); ``mode`` is a session mode id set
    with ``session/set_mode`` after the session opens (for example ``"default"`` so that Qwen Code asks before
    running tools), empty to keep the agent's own; ``install_hint`` is said when the command is missing;
    ``auth_envs`` are the environment variables that carry the agent's credential (for ``probe_environment``);
    ``interrupt`` declares INTERRUPT messages (``session/cancel``, then a prompt carrying the message): False for an
    agent that does not take a prompt right after a cancel; ``host_tool_validation`` is the text of the agent's own
    error when it checks a host tool's arguments against the tool's schema before the host sees them ("" when it
    does not).
    """

    name: str = ""
    mode: str = ""
    install_hint: str = ""
    auth_envs: tuple[str, ...] = field(default_factory=tuple)
    interrupt: bool = True
    host_tool_validation: str = ""

    def validate(self) -> None:
        """Raise InvalidDriverConfigError naming the first bad field."""
        self.validate_common("acp")
        if not self.command:
            raise InvalidDriverConfigError(
                "acp.Config.command: the agent's argv is required (for example acp.preset('qwen'))", option="command"
            )
        for fname in ("name", "mode", "install_hint", "host_tool_validation"):
            value = getattr(self, fname)
            if not isinstance(value, str) or value != value.strip():
                raise InvalidDriverConfigError(
                    f"acp.Config.{fname}: must be a string without surrounding spaces, got {value!r}", option=fname
                )
        if not isinstance(self.interrupt, bool):
            raise InvalidDriverConfigError(
                f"acp.Config.interrupt: must be True or False, got {self.interrupt!r}", option="interrupt"
            )
        if not isinstance(self.auth_envs, tuple | list) or not all(isinstance(e, str) and e for e in self.auth_envs):
            raise InvalidDriverConfigError("acp.Config.auth_envs: must be names of variables", option="auth_envs")

    @property
    def agent_name(self) -> str:
        if self.name:
            return self.name
        exe = (self.command or ["acp"])[0]
        return exe.rsplit("/", 1)[-1] or "acp"


__all__ = ["Config"]
