"""Tool use on the real Codex CLI: commands, file changes, plan updates and the sandbox levels."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaptor_nb import Agent, FeatureLevel, Notice, Phase, Policy, SandboxLevel, ToolCall, ToolResult
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._openai import Reply

from .conftest import CATALOG_MODEL, DriverFactory
from .helpers import of, run_all

pytestmark = pytest.mark.codex

UNRESTRICTED = Policy(sandbox=SandboxLevel.UNRESTRICTED)


async def test_a_command_becomes_a_tool_call_and_its_result(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(Reply.exec_command("echo hi"))
    async with Agent(make_driver(), workspace=str(workspace), policy=UNRESTRICTED) as agent:
        events, result, error = await run_all(agent.send("run it"))
    assert error is None and result is not None
    calls = [c for c in of(events, ToolCall) if c.phase is not Phase.CONTENT]
    assert [c.phase for c in calls] == [Phase.START, Phase.END]
    assert calls[0].name == "exec_command"
    assert "echo hi" in calls[0].args["command"]  # type: ignore[index]
    assert calls[0].args["cwd"] == str(workspace)  # type: ignore[index]
    (done,) = of(events, ToolResult)
    assert done.id == calls[0].id
    assert done.result["exit_code"] == 0
    assert done.result["output"] == "hi\n"
    assert not done.is_error
    assert result.text.startswith("Done. Last tool output:")
    assert "hi" in fake.model_requests[1].tool_outputs[0]
    kinds = [i.kind for i in result.transcript()]
    assert kinds == ["tool_use", "tool_result", "text"]


async def test_a_failing_command_streams_output_and_reports_its_exit_code(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(Reply.exec_command("echo one; sleep 0.3; echo two; exit 3"))
    async with Agent(make_driver(), workspace=str(workspace), policy=UNRESTRICTED) as agent:
        events, _result, _ = await run_all(agent.send("run it"))
    (done,) = of(events, ToolResult)
    assert done.is_error
    assert done.result["exit_code"] == 3
    assert done.result["status"] == "failed"
    assert "two" in done.result["output"]
    deltas = [c.result["output_delta"] for c in of(events, ToolCall) if c.phase is Phase.CONTENT and c.result]
    assert "two" in "".join(deltas)


async def test_a_patch_becomes_a_file_change_with_its_diff(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(Reply.apply_patch("*** Begin Patch\n*** Add File: notes.txt\n+written by codex\n*** End Patch\n"))
    policy = Policy(sandbox=SandboxLevel.WORKSPACE_WRITE)
    async with Agent(make_driver(model=CATALOG_MODEL), workspace=str(workspace), policy=policy) as agent:
        events, _result, error = await run_all(agent.send("write notes"))
    assert error is None
    assert (workspace / "notes.txt").read_text() == "written by codex\n"
    start = next(c for c in of(events, ToolCall) if c.phase is Phase.START)
    assert start.name == "apply_patch"
    change = start.args["changes"][0]  # type: ignore[index]
    assert change["path"] == str(workspace / "notes.txt")
    assert change["kind"] == "add"
    assert "written by codex" in change["diff"]
    (done,) = of(events, ToolResult)
    assert done.result == {"status": "completed", "paths": [str(workspace / "notes.txt")]}
    diffs = [n for n in of(events, Notice) if n.metadata.get("code") == "codex_turn_diff"]
    assert diffs and "+written by codex" in diffs[-1].data["diff"]


async def test_plan_updates_become_notices(make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path) -> None:
    plan = {"plan": [{"step": "read", "status": "completed"}, {"step": "write", "status": "in_progress"}],
            "explanation": "two steps"}  # fmt: skip
    fake.enqueue(Reply.function_call("update_plan", plan))
    driver = make_driver(model=CATALOG_MODEL, config={"tools": {"update_plan": {"enabled": True}}})
    async with Agent(driver, workspace=str(workspace)) as agent:
        events, _, error = await run_all(agent.send("plan it"))
    assert error is None
    (notice,) = [n for n in of(events, Notice) if n.kind == "plan"]
    assert notice.data["explanation"] == "two steps"
    assert [s["status"] for s in notice.data["plan"]] == ["completed", "inProgress"]
    assert notice.text.splitlines() == ["two steps", "[x] read", "[~] write"]


@pytest.mark.parametrize(
    ("level", "mode"),
    [
        (SandboxLevel.READ_ONLY, "read-only"),
        (SandboxLevel.WORKSPACE_WRITE, "workspace-write"),
        (SandboxLevel.UNRESTRICTED, "danger-full-access"),
    ],
)
async def test_sandbox_levels_map_to_codex_sandbox_modes(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path, level: SandboxLevel, mode: str
) -> None:
    async with Agent(make_driver(), workspace=str(workspace), policy=Policy(sandbox=level)) as agent:
        await agent.send("hi").result()
    developer = "\n".join(fake.model_requests[0].texts("developer"))
    assert f"`sandbox_mode` is `{mode}`" in developer


async def test_read_only_sandbox_blocks_writes_and_workspace_write_allows_them(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        fake.enqueue(Reply.exec_command("touch blocked.txt"))
        await agent.send("try", policy=Policy(sandbox=SandboxLevel.READ_ONLY)).result()
        fake.enqueue(Reply.exec_command("touch allowed.txt"))
        await agent.send("try", policy=Policy(sandbox=SandboxLevel.WORKSPACE_WRITE)).result()
    assert not (workspace / "blocked.txt").exists()
    assert (workspace / "allowed.txt").exists()
    assert "Read-only file system" in fake.model_requests[1].tool_outputs[-1]


async def test_web_search_policy_is_passed_to_codex(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        await agent.send("a", policy=Policy(web_search=FeatureLevel.DENY)).result()
        await agent.send("b", policy=Policy(web_search=FeatureLevel.ALLOW)).result()
    denied, allowed = fake.model_requests
    assert "web_search" not in denied.tool_names
    (tool,) = [t for t in allowed.body["tools"] if t.get("type") == "web_search"]
    assert tool.get("external_web_access") is True


async def test_an_inherited_sandbox_does_not_keep_the_level_of_an_earlier_run(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        thread = agent.thread("t")
        await thread.send("first", policy=Policy(sandbox=SandboxLevel.UNRESTRICTED)).result()
        fake.enqueue(Reply.exec_command("touch leaked.txt"))
        await thread.send("second").result()
    assert not (workspace / "leaked.txt").exists()
    assert "Read-only file system" in fake.model_requests[-1].tool_outputs[-1]
