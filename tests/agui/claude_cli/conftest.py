"""The Claude driver tests' fixtures (the real CLI, a private HOME, the fake Anthropic server), reused here."""

from claude.conftest import (  # noqa: F401
    agent_factory,
    claude_cli,
    fake,
    make_config,
    no_process_left_behind,
)
