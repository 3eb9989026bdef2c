"""The real Claude Code and Codex CLIs, against the fake model servers, writing files in their own worktrees;
a service's secret reaches the CLI's environment (seen only as a hash a tool wrote) and no event."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from adaptor_nb import (
    Agent,
    GitWorktrees,
    GitWorktreeWorkspace,
    LocalServices,
    Notice,
    Policy,
    SandboxLevel,
    ServiceRef,
    ServiceRequest,
    ServiceSpec,
    approve_all,
    mcp,
)
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._anthropic import FakeAnthropicServer
from adaptor_nb.testing._openai import Reply

from .clis import bash, claude_driver, codex_driver, untracked
from .gitrepo import status, worktrees

SERVICE = str(Path(__file__).parent.parent / "services" / "http_service.py")
SECRET = "svc-secret-in-cli-env-41c7"
ECHO = str(Path(__file__).parent.parent / "fixtures" / "mcp_echo_server.py")


def token_service() -> ServiceSpec:
    return ServiceSpec(
        name="tokens",
        command=[sys.executable, SERVICE, "{port}"],
        ready_line="service ready",
        secret_env={"SERVICE_TOKEN": SECRET},
        client_env={"TOKENS_URL": "http://{endpoint}/"},
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


class EchoMCP:
    """A ServiceManager (as a third party would write one) that publishes a stdio MCP server for each run."""

    def __init__(self) -> None:
        self.requests: list[ServiceRequest] = []
        self.released: list[str] = []

    async def ensure(self, request: ServiceRequest) -> Sequence[ServiceRef]:
        self.requests.append(request)
        # a per-run argument, as a service with a fresh endpoint per run would publish
        server = mcp.Stdio("svc_echo", sys.executable, args=[ECHO, request.run_id])
        return [ServiceRef(name="svc_echo", endpoint="stdio", mcp=(server,))]

    async def release_by_run(self, run_id: str) -> None:
        self.released.append(run_id)

    async def release_by_labels(self, labels: Mapping[str, str]) -> None:
        return None


@pytest.mark.claude
async def test_a_service_published_mcp_server_reaches_claude_with_the_run_identity(
    repo: Path, home: Path, anthropic: FakeAnthropicServer
) -> None:
    manager = EchoMCP()
    call = f"[[tool mcp__svc_echo__echo {json.dumps({'text': 'ping'})}]] [[say finished]]"
    async with Agent(
        claude_driver(anthropic, home),
        workspace=str(repo),
        workspace_spec=GitWorktreeWorkspace(),
        workspace_manager=GitWorktrees(),
        service_manager=manager,
        services=[ServiceSpec(name="svc_echo")],
        on_approval=approve_all(),
    ) as agent:
        result = await agent.thread("mcp").send(f"echo {call}").result()
    assert "mcp__svc_echo__echo" in anthropic.message_requests[0].tool_names
    assert result.text == "finished"
    (req,) = manager.requests
    assert req.run_id == result.run_id and req.driver_type == "claude"
    assert req.workspace.path == result.metadata["workspace.path"] and req.workspace.branch == "agent/mcp"
    assert [s.name for s in req.desired] == ["svc_echo"]
    assert manager.released == [result.run_id]


@pytest.mark.codex
async def test_codex_sees_a_service_secret_in_its_environment_only(
    repo: Path, home: Path, tmp_path: Path, openai: FakeOpenAIServer
) -> None:
    command = 'printf %s "$SERVICE_TOKEN" | sha256sum | cut -c1-64 > token.sha'
    openai.enqueue(Reply.exec_command(command))
    async with Agent(
        codex_driver(openai, home, tmp_path),
        workspace=str(repo),
        workspace_spec=GitWorktreeWorkspace(),
        workspace_manager=GitWorktrees(),
        service_manager=LocalServices(),
        services=[token_service()],
        policy=Policy(sandbox=SandboxLevel.UNRESTRICTED),
    ) as agent:
        stream = agent.thread("svc").send("check")
        events = [e async for e in stream.events()]
        result = await stream.result()
    tree = Path(result.metadata["workspace.path"])
    assert (tree / "token.sha").read_text().strip() == hashlib.sha256(SECRET.encode()).hexdigest()
    seen = repr(events) + repr(result) + json.dumps([repr(i) for i in result.transcript()])
    seen += json.dumps([r.body for r in openai.model_requests], default=str)
    assert SECRET not in seen
    assert status(repo) == []


@pytest.mark.claude
async def test_per_run_service_endpoints_do_not_break_the_threads_resume(
    repo: Path, home: Path, anthropic: FakeAnthropicServer
) -> None:
    manager = EchoMCP()
    async with Agent(
        claude_driver(anthropic, home),
        workspace=str(repo),
        workspace_spec=GitWorktreeWorkspace(),
        workspace_manager=GitWorktrees(),
        service_manager=manager,
        services=[ServiceSpec(name="svc_echo")],
    ) as agent:
        await agent.thread("t").send("one").result()
        stream = agent.thread("t").send("two")
        events = [e async for e in stream.events()]
        await stream.result()
    assert len(manager.requests) == 2
    assert not [e for e in events if isinstance(e, Notice) and e.kind == "thread.continuity"]
    assert len(anthropic.message_requests[-1].messages) > 1  # the second run resumed the first one's session
