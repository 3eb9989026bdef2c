"""The AG-UI endpoint over the real ``claude`` binary against the fake Anthropic server: a tool call, and an
approval interrupt answered by a resume; every recorded run passes the validator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from adaptor_nb.bridges import agui

from ..client import body, history, run
from ..frames import findings

pytestmark = pytest.mark.claude
TOKEN = "claude-token"


async def test_a_tool_call_streams_through_the_endpoint(agent_factory: Any, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    read = json.dumps({"file_path": str(workspace / "a.txt")})
    srv = await agui.serve(agui.app(agent_factory(), token=TOKEN))
    try:
        async with httpx.AsyncClient(timeout=120) as client:
            events = await run(client, srv.url, body("c1", ("u1", f"read [[tool Read {read}]] [[say done]]")), TOKEN)
    finally:
        await srv.stop()
    assert findings(events) == []
    start = next(e for e in events if e["type"] == "TOOL_CALL_START")
    assert start["toolCallName"] == "Read"
    args = "".join(e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS")
    assert json.loads(args) == json.loads(read)
    result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
    assert result["toolCallId"] == start["toolCallId"] and "alpha" in result["content"]
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["result"]["text"] == "done"
    assert events[-1]["usage"][0]["inputTokens"] > 0


async def test_an_approval_is_an_interrupt_and_the_resume_runs_the_tool(agent_factory: Any, workspace: Path) -> None:
    target = workspace / "approved.txt"
    cmd = {"command": f"touch {target}", "description": "create a file"}
    srv = await agui.serve(agui.app(agent_factory(), token=TOKEN, key=str))
    try:
        async with httpx.AsyncClient(timeout=120) as client:
            first = await run(client, srv.url, body("c2", ("u1", f"make it [[tool Bash {json.dumps(cmd)}]]")), TOKEN)
            outcome = first[-1].get("outcome") or {}
            assert outcome.get("type") == "interrupt", first[-1]
            (intr,) = outcome["interrupts"]
            assert intr["reason"] == "tool_approval" and intr["toolCallId"]
            live = srv.app.bridge.lives["c2"]
            assert not live.stream.done and not target.exists()  # the CLI waits
            resume = [{"interruptId": intr["id"], "status": "resolved", "payload": {"approved": True}}]
            payload = body("c2", run_id="r2", resume=resume) | {"messages": history(first)}
            second = await run(client, srv.url, payload, TOKEN)
    finally:
        await srv.stop()
    assert findings(first) == [] and findings(second) == []
    assert target.exists()
    assert second[-1]["type"] == "RUN_FINISHED" and second[-1].get("outcome") is None
    assert any(e["type"] == "TOOL_CALL_RESULT" and e["toolCallId"] == intr["toolCallId"] for e in second)
