"""Credentials checked before a run starts: one check for the notebook's ``--driver X``, ``%agent use X`` and
``--map``, and for ``map_rows``.

A CLI without credentials only learns so from its provider, after its own retries (Codex reconnects for about
30 s, Claude takes seconds): the check reads the same sources the driver's environment probe names (API key
variables, login files, cloud switches) without starting any process, so a cell that cannot run fails at once
and says what to set.
"""

from __future__ import annotations

import contextlib
from typing import Any

FIXES = {
    "claude": (
        "set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN, or CLAUDE_CODE_USE_BEDROCK=1 / "
        "CLAUDE_CODE_USE_VERTEX=1 with that cloud's settings) in the kernel's environment, or sign in once with "
        "`claude` in a terminal"
    ),
    "codex": (
        "set OPENAI_API_KEY (or CODEX_API_KEY) in the kernel's environment, sign in once with `codex login` in a "
        "terminal, or name a model_provider in ~/.codex/config.toml"
    ),
    "cursor": "set CURSOR_API_KEY in the kernel's environment, or sign in once with `agent login` in a terminal",
    "codebuddy": "set CODEBUDDY_API_KEY (and CODEBUDDY_BASE_URL for another endpoint) in the kernel's environment",
}
"""What to set so that each CLI driver has credentials, in one sentence each."""


def credential_source(name: str, driver: Any) -> str | None:
    """Where ``driver`` would take its credentials from ("" when nothing is found), or None when it cannot be told
    without starting the CLI (a driver with no offline check, such as the ACP agents and the demo driver)."""
    if name == "codex":
        from .driver import Invocation
        from .drivers.codex._home import auth_source

        with contextlib.suppress(Exception):
            return auth_source(driver._env(Invocation(run_id="credentials", prompt="")))
        return None
    for attr in ("auth_source", "_auth_source"):
        read = getattr(driver, attr, None)
        if callable(read):
            try:
                return str(read())
            except Exception:
                return None
    return None


def replaying() -> bool:
    """True while a cassette replays runs (``%agent record``, or ``$ADAPTOR_NB_CASSETTE`` as the pytest option sets
    it): a recorded run needs no credentials."""
    import os

    from .cassette import _cassette as cassette

    current = cassette.active()
    if current is not None:
        return current.mode != "rewrite"
    if not os.environ.get(cassette.CASSETTE_ENV, "").strip():  # the environment's cassette starts at the first run
        return False
    try:
        return cassette.env_mode() != "rewrite"
    except Exception:
        return False


def missing_credentials(name: str, driver: Any) -> str:
    """One sentence saying that driver ``name`` has no credentials and what to set ("" when it has some, or when
    that cannot be told without starting its CLI)."""
    if name not in FIXES or driver is None or replaying() or credential_source(name, driver) != "":
        return ""
    return f"the {name} driver has no credentials here; to fix it, {FIXES[name]}"
