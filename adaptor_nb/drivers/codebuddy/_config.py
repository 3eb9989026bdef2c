"""The CodeBuddy Code driver's configuration and its validation."""

from __future__ import annotations

from dataclasses import dataclass

from ...driver import ClaudeFamilyConfig

INSTALL_HINT = (
    "Install CodeBuddy Code with `pip install 'adaptor_nb[codebuddy]'` (the codebuddy-agent-sdk wheel bundles the "
    "CLI), set CODEBUDDY_CODE_PATH, or pass Config(command=['/path/to/codebuddy-headless'])."
)


@dataclass(frozen=True)
class Config(ClaudeFamilyConfig):
    """How to run CodeBuddy Code.

    ``model`` and ``effort`` become ``--model``/``--effort``; ``max_turns_per_run`` is passed as ``--max-turns``
    (0 = no cap; this CLI version does not enforce it for tool turns); ``permission_mode`` is the CLI's starting
    mode (``bypassPermissions`` is not offered: it skips approvals entirely); ``allowed_tools``/``disallowed_tools``
    are permission rules.
    """

    DRIVER = "codebuddy"
    RESERVED_ARGS = ClaudeFamilyConfig.RESERVED_ARGS | {"--setting-sources", "-y", "--acp", "--serve"}
