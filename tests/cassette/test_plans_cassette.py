"""Plans and capability use survive a driver cassette: a Claude Code run with TodoWrite and an MCP tool, recorded
against the fake Anthropic server, replays with no CLI and no server into the same plan and capability events."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _support import drain, require_cli

from adaptor_nb import Agent, ApprovalMode, ApprovalPolicy, CapabilityEnd, CapabilityStart, PlanUpdate, Policy, mcp
from adaptor_nb.cassette import Cassette
from adaptor_nb.drivers import claude
from adaptor_nb.testing import FakeAnthropicServer

from .test_claude_cassette import _config

ECHO = str(Path(__file__).parent.parent / "fixtures" / "mcp_echo_server.py")
TODOS = {"todos": [{"content": "echo it", "status": "in_progress", "activeForm": "echoing"}]}
DONE = {"todos": [{"content": "echo it", "status": "completed", "activeForm": "echoing"}]}
PROMPT = (
    f"[[tool TodoWrite {json.dumps(TODOS)}]] [[tool mcp__echo__echo {json.dumps({'text': 'ping'})}]] "
    f"[[tool TodoWrite {json.dumps(DONE)}]] [[say all done]]"
)
AUTO = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_APPROVE))


def _activity(events: list[Any]) -> list[tuple[Any, ...]]:
    """The plan and capability events; a scope as the order it first appeared in (a cassette scrubs tool ids)."""
    out: list[tuple[Any, ...]] = []
    scopes: dict[str, int] = {}
    for e in events:
        if isinstance(e, PlanUpdate):
            out.append(("plan", e.revision, e.source, tuple((i.text, i.status) for i in e.items)))
        elif isinstance(e, CapabilityStart):
            scope = scopes.setdefault(e.scope, len(scopes))
            out.append(("start", e.kind, e.name, scope, json.dumps(e.input, sort_keys=True)))
        elif isinstance(e, CapabilityEnd):
            scope = scopes.setdefault(e.scope, len(scopes))
            out.append(("end", e.kind, e.name, scope, e.ok, "echo: ping" in json.dumps(e.output)))
    return out


async def _run(command: list[str], home: Path, workspace: Path, url: str) -> tuple[list[Any], Any, Any]:
    server = mcp.Stdio("echo", sys.executable, args=[ECHO])
    agent = Agent(_driver(command, home, workspace, url), workspace=str(workspace), mcp=[server], policy=AUTO)
    try:
        return await drain(agent.thread("plans").send(PROMPT))
    finally:
        await agent.close()


def _driver(command: list[str], home: Path, workspace: Path, url: str) -> claude.Driver:
    return claude.Driver(_config(command, home, workspace, url))


@pytest.fixture
def cli() -> str:
    return require_cli("claude", "run `bash scripts/setup.sh`")


async def test_plans_and_capabilities_replay_from_a_cassette(
    cli: str, tmp_path: Path, home: Path, workspace: Path
) -> None:
    tape = tmp_path / "plans.jsonl"
    with FakeAnthropicServer() as fake, Cassette(tape, mode="rewrite"):
        live_events, live, err = await _run([cli], home, workspace, fake.url)
        url = fake.url
    assert err is None and live is not None
    recorded = _activity(live_events)
    assert [r[0] for r in recorded] == ["plan", "start", "end", "plan"]
    assert recorded[2][4:] == (True, True)
    with Cassette(tape, mode="none") as play:
        events, result, err = await _run([str(tmp_path / "no-such" / "claude")], home, workspace, url)
    assert play.replayed == 1 and err is None and result is not None
    assert _activity(events) == recorded
    wanted = ("plan", "capability_start", "capability_end")
    assert [t.kind for t in result.transcript() if t.kind in wanted] == [
        t.kind for t in live.transcript() if t.kind in wanted
    ]
