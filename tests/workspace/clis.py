"""Real CLI drivers for the workspace tests: Claude Code and Codex against the fake model servers."""

from __future__ import annotations

import json
from pathlib import Path

from _support import require_cli

from adaptor_nb.drivers import claude, codex
from adaptor_nb.drivers.codex._home import provider_settings, write_codex_home
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._anthropic import FakeAnthropicServer

from .gitrepo import status

QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_MAX_RETRIES": "0",
}


def bash(command: str) -> str:
    return f"[[tool Bash {json.dumps({'command': command, 'description': 'write a file'})}]]"


def untracked(path: str) -> list[str]:
    return sorted(line[3:] for line in status(path) if line.startswith("??"))


def claude_driver(server: FakeAnthropicServer, home: Path) -> claude.Driver:
    cli = require_cli("claude", "run `bash scripts/setup.sh`")
    return claude.Driver(
        claude.Config(
            command=[cli],
            env={"HOME": str(home), "ANTHROPIC_BASE_URL": server.url, **QUIET},
            secret_env={"ANTHROPIC_API_KEY": "sk-ant-test-0123456789"},
            bare=True,
            startup_timeout=30.0,
            grace_period=1.0,
        )
    )


def codex_driver(server: FakeOpenAIServer, home: Path, tmp: Path) -> codex.Driver:
    cli = require_cli("codex", "run `bash scripts/setup.sh`")
    settings = provider_settings(
        base_url=server.base_url, model="gpt-fake", env_key="FAKE_KEY", request_max_retries=0, stream_max_retries=0
    )
    codex_home = write_codex_home(tmp / "codex-home", settings)
    return codex.Driver(
        codex.Config(
            command=[cli],
            codex_home=str(codex_home),
            env={"HOME": str(home)},
            secret_env={"FAKE_KEY": "sk-test-codex-0000"},
            grace_period=1.0,
        )
    )
