"""Record and replay agent runs: cassettes of what a driver exchanged with its CLI, for notebook CI.

``use("runs.jsonl", mode="once")`` (or ``%agent record runs.jsonl``, or ``$ADAPTOR_NB_CASSETTE``) makes every
CLI driver run go through the cassette: a recorded run is played back in this process by a stand-in that answers
the real driver code with the recorded frames (no CLI, key, network or child process needed); a missing one is
recorded by teeing the CLI's pipes. Modes: ``none`` (replay only, the CI default), ``once`` (record what is
missing), ``rewrite``.
"""

from __future__ import annotations

import os as _os

from ._cassette import MODE_ENV, MODES, Cassette, CassetteError, Mode, active, check_mode, env_mode, from_env, stop, use

SANITIZE_FILE: str = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "nbval_sanitize.cfg")
"""The nbval sanitize file adaptor_nb ships: ``pytest --nbval --nbval-sanitize-with <SANITIZE_FILE>``."""

__all__ = [
    "MODES",
    "MODE_ENV",
    "SANITIZE_FILE",
    "Cassette",
    "CassetteError",
    "Mode",
    "active",
    "check_mode",
    "env_mode",
    "from_env",
    "stop",
    "use",
]
