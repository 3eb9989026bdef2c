"""The Codex driver tests' fixtures (the real CLI, a private CODEX_HOME, the fake model server), reused here."""

from codex.conftest import (  # noqa: F401
    _no_leftover_processes,
    codex_bin,
    codex_home,
    fake,
    make_driver,
    tripwire,
)
