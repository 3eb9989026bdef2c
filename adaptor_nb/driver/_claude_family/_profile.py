"""What tells one Claude-family CLI from another: names, flags, environment, and the shapes of a few lines.

The family's engine (process, decoder, run loop, approvals, driver) is one implementation; a profile is the
whole of what a CLI of the family (Claude Code, CodeBuddy Code) changes in it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..._enums import Boundary, ContinueMode
from .._spi import MessageCapabilities


def _same(text: str) -> str:
    return text


@dataclass(frozen=True)
class ClaudeFamilyProfile:
    """One CLI of the Claude family.

    ``name`` is the driver's name (notice codes, messages, process names); ``label`` the CLI in sentences
    ("Claude Code"); ``short`` the product ("Claude"); ``provider`` the outcome's provider.

    Command line and environment: ``protocol_args`` follow the stream-json flags; ``stripped_env`` are removed from
    the inherited environment and ``silent_env`` set over it; ``reserved_args`` may not be passed as extra args.

    Protocol quirks: ``echoes_input`` (the CLI replays user lines, so delivery is confirmed by the echo);
    ``steers`` (in-run messages go through the ``steer`` control request, not as a stdin line while a tool runs);
    ``allowed_key`` (approvals are answered ``{allowed: bool}`` with the ``tool_use_id``, not ``{behavior}``);
    ``settle_after_result`` (seconds a user line waits after a ``result``: the CLI drops one written sooner);
    ``initialize`` (the control request sent when a process starts, if any); ``interrupt_opens_turn`` (messages of
    an interrupted turn open the next one as INTERRUPT deliveries rather than joining the turn-end ones);
    ``asks_for_allowed_tools`` (the CLI asks about host tools ``--allowedTools`` names: they are allowed at once);
    ``list_models_args`` (extra flags of the process that only lists models); ``min_version`` (the oldest CLI with
    in-run delivery and interrupts: an older one gets them trimmed); ``host_tools_channel`` (host tools are served
    over the control channel as an SDK MCP server). ``install_hint`` says how to install the CLI; ``no_auth`` what
    the environment probe reports when no credentials are found. ``explain`` rewrites a failed turn's
    message; ``redact`` hides what the CLI reveals in its output beyond the secrets the driver passed it.
    """

    name: str
    label: str
    short: str
    provider: str
    protocol_args: tuple[str, ...] = ()
    stripped_env: tuple[str, ...] = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT")
    silent_env: Mapping[str, str] = field(default_factory=dict)
    reserved_args: frozenset[str] = frozenset()
    echoes_input: bool = True
    steers: bool = False
    allowed_key: bool = False
    settle_after_result: float = 0.0
    initialize: Mapping[str, Any] | None = None
    interrupt_opens_turn: bool = False
    asks_for_allowed_tools: bool = False
    list_models_args: tuple[str, ...] = ()
    min_version: str = ""
    install_hint: str = ""
    no_auth: str = "no credentials found"
    host_tools_channel: bool = False
    explain: Callable[[str], str] = _same
    redact: Callable[[bytes], bytes] | None = None

    @property
    def messages(self) -> MessageCapabilities:
        """Supplemental messages on this CLI: in the running turn and at its end, interrupts, continued in-run;
        delivery confirmed when the CLI echoes input."""
        return MessageCapabilities(
            boundaries=frozenset({Boundary.IN_RUN, Boundary.TURN_END}),
            interrupt=True,
            continue_mode=ContinueMode.IN_RUN,
            confirmed_delivery=self.echoes_input,
            persists_delivered=True,
            min_version=self.min_version,
        )
