"""The AG-UI endpoint over the real ``codex`` binary against the fake model server: plain text, and a command
approval as an interrupt answered by a resume; every recorded run passes the validator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from adaptor_nb import Agent, ApprovalMode, ApprovalPolicy, Policy, SandboxLevel
from adaptor_nb.bridges import agui
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._openai import Reply

from ..client import body, history, run
from ..frames import findings

pytestmark = pytest.mark.codex
TOKEN = "codex-token"


async def test_plain_text_with_reasoning(make_driver: Any, fake: FakeOpenAIServer, workspace: Path) -> None:
    fake.enqueue(Reply.text("hello from codex", reasoning="thinking it over"))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        srv = await agui.serve(agui.app(agent, token=TOKEN))
        try:
            async with httpx.AsyncClient(timeout=120) as client:
                events = await run(client, srv.url, body("x1", ("u1", "say hello")), TOKEN)
        finally:
            await srv.stop()
    assert findings(events) == []
    assert "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT") == "hello from codex"
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["result"]["text"] == "hello from codex"


async def test_a_command_approval_is_an_interrupt_and_the_resume_runs_it(
    make_driver: Any, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(
        Reply.exec_command(
            "touch made.txt && echo made", sandbox_permissions="require_escalated", justification="needs to write"
        )
    )
    policy = Policy(sandbox=SandboxLevel.READ_ONLY, approvals=ApprovalPolicy(permission=ApprovalMode.ASK, timeout=-1))
    async with Agent(make_driver(), workspace=str(workspace), policy=policy) as agent:
        srv = await agui.serve(agui.app(agent, token=TOKEN, key=str))
        try:
            async with httpx.AsyncClient(timeout=120) as client:
                first = await run(client, srv.url, body("x2", ("u1", "make a file")), TOKEN)
                outcome = first[-1].get("outcome") or {}
                assert outcome.get("type") == "interrupt", first[-1]
                (intr,) = outcome["interrupts"]
                assert intr["reason"] == "tool_approval" and "touch made.txt" in intr["message"]
                keys = [c["key"] for c in intr["metadata"]["choices"]]
                assert "accept" in keys and "decline" in keys
                assert not (workspace / "made.txt").exists()
                resume = [{"interruptId": intr["id"], "status": "resolved", "payload": {"approved": True}}]
                payload = body("x2", run_id="r2", resume=resume) | {"messages": history(first)}
                second = await run(client, srv.url, payload, TOKEN)
        finally:
            await srv.stop()
    assert findings(first) == [] and findings(second) == []
    assert (workspace / "made.txt").exists()
    assert second[-1]["type"] == "RUN_FINISHED" and second[-1].get("outcome") is None
