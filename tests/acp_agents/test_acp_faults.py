"""Bad agents end the run with a clear RunError within bounded time, keep the stderr tail, and leave no process."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from adaptor_nb import (
    Agent,
    ApprovalMode,
    ApprovalPolicy,
    ApprovalRequest,
    Notice,
    Policy,
    RunError,
    ToolCall,
    mcp,
)
from adaptor_nb.drivers import acp

ASK = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.ASK))
FAKE = str(Path(__file__).with_name("fake_agent.py"))


def driver(fault: str, **fields: object) -> acp.Driver:
    return acp.Driver(acp.Config(command=[sys.executable, FAKE, fault], name="fake", grace_period=0.5, **fields))


async def run(fault: str, tmp_path: Path, **fields: object) -> RunError:
    async with Agent(driver(fault, **fields), workspace=str(tmp_path)) as agent:
        with pytest.raises(RunError) as info:
            await agent.send("hello").result()
    return info.value


async def test_an_agent_that_never_answers_initialize_fails_at_the_startup_timeout(tmp_path: Path) -> None:
    err = await run("silent", tmp_path, startup_timeout=1.0)
    assert "did not answer initialize within 1 s" in str(err)


async def test_an_agent_speaking_another_protocol_version_is_refused(tmp_path: Path) -> None:
    err = await run("version", tmp_path)
    assert "protocol version 99" in str(err)


async def test_an_agent_that_needs_authentication_fails_naming_its_auth_method(tmp_path: Path) -> None:
    err = await run("auth", tmp_path)
    assert "needs authentication" in str(err) and "Fake login" in str(err)


async def test_an_agent_exiting_mid_turn_fails_with_its_stderr_tail_and_the_partial_text(tmp_path: Path) -> None:
    err = await run("crash", tmp_path)
    assert "exited during the turn" in str(err)
    assert "out of cheese" in str(err.details.get("stderr_tail", ""))
    assert err.details.get("partial_text") == "partial answer"


async def test_a_line_that_is_not_json_rpc_is_skipped(tmp_path: Path) -> None:
    async with Agent(driver("garbage"), workspace=str(tmp_path)) as agent:
        result = await agent.send("hello").result()
    assert result.text == "whole answer"


async def test_an_agent_silent_mid_turn_fails_at_the_idle_timeout_with_the_partial_text(tmp_path: Path) -> None:
    err = await run("stall", tmp_path, idle_timeout=1.0)
    assert "sent nothing for 1 s (Config.idle_timeout)" in str(err)
    assert err.details.get("partial_text") == "partial answer"


async def test_a_line_that_is_not_json_rpc_is_reported_to_the_run_and_logs_no_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with Agent(driver("garbage"), workspace=str(tmp_path)) as agent:
        stream = agent.send("hello")
        notices = [e async for e in stream.events() if isinstance(e, Notice)]
        result = await stream.result()
    assert result.text == "whole answer"
    (skipped,) = [n for n in notices if n.metadata.get("code") == "acp_unparseable_line"]
    assert skipped.data["line"] == "this is {not json"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_notification_outside_acp_is_ignored_without_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with Agent(driver("extension"), workspace=str(tmp_path)) as agent:
        result = await agent.send("hello").result()
    assert result.text == "whole answer"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_permission_request_for_an_unannounced_tool_call_announces_it_then_asks(tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> None:
        asked.append(request)
        request.approve()

    async with Agent(driver("ghost"), workspace=str(tmp_path), policy=ASK, on_approval=approve) as agent:
        stream = agent.send("hello")
        events = [e async for e in stream.events() if isinstance(e, ToolCall | ApprovalRequest)]
        result = await stream.result()
    assert result.text == 'permission: {"outcome": {"optionId": "yes", "outcome": "selected"}}'
    assert [type(e).__name__ for e in events] == ["ToolCall", "ApprovalRequest"]
    assert events[0].id == asked[0].tool_call_id == "ghost-1"


async def test_a_permission_request_without_a_tool_call_id_is_refused_without_asking(tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []
    async with Agent(driver("anonymous"), workspace=str(tmp_path), policy=ASK, on_approval=asked.append) as agent:
        result = await agent.send("hello").result()
    assert result.text == "permission: error -32602"
    assert not asked


async def test_file_requests_outside_the_workspace_are_declined_and_nothing_is_written(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with Agent(driver("outside"), workspace=str(workspace)) as agent:
        stream = agent.send("hello")
        notices = [e async for e in stream.events() if isinstance(e, Notice) and e.kind == "lifecycle"]
        result = await stream.result()
    assert result.text == "read: error -32601; write: error -32601"
    assert [(n.data["method"], n.data["target"]) for n in notices] == [
        ("fs/read_text_file", "/etc/hostname"),
        ("fs/write_text_file", str(tmp_path / "outside.txt")),
    ]
    assert not (tmp_path / "outside.txt").exists()


async def test_http_mcp_servers_go_to_an_agent_that_takes_them_with_their_bearer_token(tmp_path: Path) -> None:
    server = mcp.HTTP("docs", "http://127.0.0.1:9/mcp", headers={"X-Team": "a"}, bearer_token_env="DOCS_TOKEN")
    fake = driver("mcp", env={"DOCS_TOKEN": "t0k"})
    async with Agent(fake, workspace=str(tmp_path), mcp=[server]) as agent:
        result = await agent.send("hello").result()
    (sent,) = json.loads(result.text)
    assert sent["type"] == "http" and sent["name"] == "docs" and sent["url"] == "http://127.0.0.1:9/mcp"
    assert {h["name"]: h["value"] for h in sent["headers"]} == {"X-Team": "a", "Authorization": "Bearer t0k"}


async def test_an_sse_mcp_server_fails_the_run_on_an_agent_that_does_not_take_sse(tmp_path: Path) -> None:
    server = mcp.SSE("old", "http://127.0.0.1:9/sse")
    async with Agent(driver("mcp"), workspace=str(tmp_path), mcp=[server]) as agent:
        with pytest.raises(
            RunError, match=r"does not take MCP servers over sse \(its mcpCapabilities offer stdio, http\)"
        ):
            await agent.send("hello").result()
