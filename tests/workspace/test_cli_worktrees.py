"""The real Claude Code and Codex CLIs, against the fake model servers, writing files in their own worktrees;
a service's secret reaches the CLI's environment (seen only as a hash a tool wrote) and no event."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from _support import require_cli

from adaptor_nb import (
    Agent,
    GitWorktrees,
    GitWorktreeWorkspace,
    LocalServices,
    Policy,
    SandboxLevel,
    ServiceSpec,
    approve_all,
)
from adaptor_nb.drivers import claude, codex
from adaptor_nb.drivers.codex._home import provider_settings, write_codex_home
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._anthropic import FakeAnthropicServer
from adaptor_nb.testing._openai import Reply

from .gitrepo import status, worktrees

SERVICE = str(Path(__file__).parent.parent / "services" / "http_service.py")
SECRET = "svc-secret-in-cli-env-41c7"
QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_MAX_RETRIES": "0",
}


def bash(command: str) -> str:
    return f"[[tool Bash {json.dumps({'command': command, 'description': 'write a file'})}]]"


def token_service() -> ServiceSpec:
    return ServiceSpec(
        name="tokens",
        command=[sys.executable, SERVICE, "{port}"],
        ready_line="service ready",
        secret_env={"SERVICE_TOKEN": SECRET},
        client_env={"TOKENS_URL": "http://{endpoint}/"},
    )


def untracked(path: str) -> list[str]:
    return sorted(line[3:] for line in status(path) if line.startswith("??"))


@pytest.fixture
def anthropic() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
async def openai() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as server:
        yield server


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


@pytest.mark.claude
async def test_claude_threads_write_in_their_own_worktrees(
    repo: Path, home: Path, anthropic: FakeAnthropicServer
) -> None:
    async with Agent(
        claude_driver(anthropic, home),
        workspace=str(repo),
        workspace_spec=GitWorktreeWorkspace(),
        workspace_manager=GitWorktrees(),
        on_approval=approve_all(),
    ) as agent:
        a, b = await asyncio.gather(
            agent.thread("alpha").send(f"write {bash('echo from alpha > alpha.txt')}").result(),
            agent.thread("beta").send(f"write {bash('echo from beta > beta.txt')}").result(),
        )
    pa, pb = a.metadata["workspace.path"], b.metadata["workspace.path"]
    assert pa != pb
    assert (Path(pa) / "alpha.txt").read_text() == "from alpha\n"
    assert (Path(pb) / "beta.txt").read_text() == "from beta\n"
    assert untracked(pa) == ["alpha.txt"] and untracked(pb) == ["beta.txt"]
    assert status(repo) == [] and not (repo / "alpha.txt").exists() and not (repo / "beta.txt").exists()
    assert {(pa, "agent/alpha"), (pb, "agent/beta")} <= set(worktrees(repo))


@pytest.mark.claude
async def test_claude_sees_a_service_secret_in_its_environment_only(
    repo: Path, home: Path, anthropic: FakeAnthropicServer
) -> None:
    command = 'printf %s "$SERVICE_TOKEN" | sha256sum | cut -c1-64 > token.sha; printf %s "$TOKENS_URL" > url.txt'
    async with Agent(
        claude_driver(anthropic, home),
        workspace=str(repo),
        workspace_spec=GitWorktreeWorkspace(),
        workspace_manager=GitWorktrees(),
        service_manager=LocalServices(),
        services=[token_service()],
        on_approval=approve_all(),
    ) as agent:
        stream = agent.thread("svc").send(f"check {bash(command)}")
        events = [e async for e in stream.events()]
        result = await stream.result()
    tree = Path(result.metadata["workspace.path"])
    assert (tree / "token.sha").read_text().strip() == hashlib.sha256(SECRET.encode()).hexdigest()
    (report,) = result.services()
    assert (tree / "url.txt").read_text() == f"http://{report.endpoint}/"
    seen = repr(events) + repr(result) + json.dumps([repr(i) for i in result.transcript()])
    seen += repr(anthropic.message_requests)
    assert SECRET not in seen
    assert status(repo) == []


@pytest.mark.codex
async def test_codex_threads_write_in_their_own_worktrees(
    repo: Path, home: Path, tmp_path: Path, openai: FakeOpenAIServer
) -> None:
    policy = Policy(sandbox=SandboxLevel.UNRESTRICTED)
    results: dict[str, Any] = {}
    async with Agent(
        codex_driver(openai, home, tmp_path),
        workspace=str(repo),
        workspace_spec=GitWorktreeWorkspace(),
        workspace_manager=GitWorktrees(),
        policy=policy,
    ) as agent:
        for name in ("alpha", "beta"):
            openai.enqueue(Reply.exec_command(f"echo from {name} > {name}.txt"))
            results[name] = await agent.thread(name).send("write it").result()
    for name in ("alpha", "beta"):
        tree = results[name].metadata["workspace.path"]
        assert results[name].metadata["workspace.branch"] == f"agent/{name}"
        assert (Path(tree) / f"{name}.txt").read_text() == f"from {name}\n"
        assert untracked(tree) == [f"{name}.txt"]
    assert status(repo) == []
    assert len(worktrees(repo)) == 3
