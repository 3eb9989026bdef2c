"""The endpoint driven by the official @ag-ui/client HttpAgent (pinned npm package, installed by scripts/setup.sh),
with every recorded response checked by the ag-ui-validate CLI and pytest plugin: zero errors, zero warnings."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ag_ui_validate.pytest_plugin import assert_valid_agui

from adaptor_nb import Agent, ApprovalKind, ApprovalPolicy, Policy
from adaptor_nb.bridges import agui
from adaptor_nb.drivers import reference as ref

from .recording import Recorder

ROOT = Path(__file__).resolve().parents[2]
PREFIX = ROOT / ".cache" / "npm-agui" / "node_modules"
SCRIPT = Path(__file__).parent / "node" / "scenarios.mjs"
VALIDATE = Path(sys.executable).parent / "ag-ui-validate"
TOKEN = "node-token"

SCENARIOS = {
    "plain": ref.Scenario(ref.Turn(ref.ThinkingStep("a greeting is due"), ref.Text("hello from the notebook"))),
    "tool": ref.Scenario(ref.Turn(ref.ToolUse("Read", {"path": "data.csv"}, {"rows": 3}, id="call-1"), "3 rows")),
    "approval": ref.Scenario(
        ref.Turn(
            ref.ToolUse("Bash", {"command": "make clean"}, {"ok": True}, approval=ApprovalKind.PERMISSION, id="call-9"),
            "cleaned",
        )
    ),
    "supplement": ref.Scenario(
        ref.Turn(ref.Text("working on it "), ref.WaitForMessage(), ref.Text("done, with tests"))
    ),
}


@pytest.fixture(scope="module")
def node() -> str:
    path = shutil.which("node")
    if path is None or not (PREFIX / "@ag-ui" / "client" / "package.json").exists():
        pytest.skip(
            "node or @ag-ui/client is not installed: run `bash scripts/setup.sh` (installs it into .cache/npm-agui)"
        )
    return path


async def drive(node: str, scenario: str, tmp_path: Path) -> tuple[dict[str, Any], list[Path]]:
    agent = Agent(ref.Driver(scenario=SCENARIOS[scenario]))
    app = Recorder(agui.app(agent, token=TOKEN, key=str, policy=Policy(approvals=ApprovalPolicy(timeout=-1))), tmp_path)
    srv = await agui.serve(app)
    try:
        proc = await asyncio.create_subprocess_exec(
            node,
            str(SCRIPT),
            scenario,
            srv.url,
            TOKEN,
            env={**os.environ, "AGUI_CLIENT_PREFIX": str(PREFIX)},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        await srv.stop()
        await agent.close()
    assert proc.returncode == 0, out.decode() + err.decode()
    assert b"Warning" not in err and b"warn" not in err.lower(), err.decode()  # the client accepted every event
    return json.loads(out.decode().splitlines()[-1]), app.files


def validate(files: list[Path]) -> list[dict[str, Any]]:
    """Run the ag-ui-validate CLI on each recorded stream; return its JSON reports (asserting zero findings)."""
    reports = []
    for path in files:
        proc = subprocess.run(
            [str(VALIDATE), "--json", "--no-color", "--fail-on", "warning", str(path)], capture_output=True, text=True
        )
        report = json.loads(proc.stdout)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert report["summary"]["errors"] == 0 and report["summary"]["warnings"] == 0, report
        reports.append(report)
        lines = [line[6:] for line in path.read_text().splitlines() if line.startswith("data: ")]
        assert_valid_agui(lines, max_warnings=0)
    return reports


async def test_a_plain_run(node: str, tmp_path: Path) -> None:
    out, files = await drive(node, "plain", tmp_path)
    assistant = [m for m in out["messages"] if m["role"] == "assistant"]
    assert assistant[-1]["content"] == "hello from the notebook"
    assert out["result"]["text"] == "hello from the notebook"
    assert any(m["role"] == "reasoning" for m in out["messages"])
    assert out["state"]["turns"] == 1
    validate(files)


async def test_a_tool_call(node: str, tmp_path: Path) -> None:
    out, files = await drive(node, "tool", tmp_path)
    calls = [c for m in out["messages"] for c in m["toolCalls"]]
    assert calls == [{"id": "call-1", "name": "Read", "arguments": '{"path": "data.csv"}'}] or (
        len(calls) == 1 and json.loads(calls[0]["arguments"]) == {"path": "data.csv"}
    )
    (result,) = [m for m in out["messages"] if m["role"] == "tool"]
    assert result["toolCallId"] == "call-1" and json.loads(result["content"]) == {"rows": 3}
    validate(files)


async def test_an_approval_interrupt_and_its_resume(node: str, tmp_path: Path) -> None:
    out, files = await drive(node, "approval", tmp_path)
    (intr,) = out["interrupts"]
    assert intr["reason"] == "tool_approval" and intr["toolCallId"] == "call-9"
    assert out["pendingInterrupts"] == []  # answered by the resume run
    assert out["result"]["text"] == "cleaned"
    assert [m["toolCallId"] for m in out["messages"] if m["role"] == "tool"] == ["call-9"]
    assert len(files) == 2
    validate(files)


async def test_a_supplemental_message_into_an_active_run(node: str, tmp_path: Path) -> None:
    out, files = await drive(node, "supplement", tmp_path)
    assert out["result"]["text"].endswith("done, with tests")
    assert out["secondResult"]["runId"] == out["result"]["runId"]  # the same run, joined
    assert out["receipts"] and out["receipts"][-1]["id"] == "u2" and out["receipts"][-1]["state"] == 2
    assert len(files) == 2
    validate(files)


async def test_the_live_endpoint_passes_the_validator_cli_and_plugin_with_transport_rules() -> None:
    from ag_ui_validate.pytest_plugin import assert_valid_agui_endpoint

    agent = Agent(ref.Driver(scenario=SCENARIOS["tool"]))
    srv = await agui.serve(agui.app(agent, token=TOKEN))
    try:
        auth = {"authorization": f"Bearer {TOKEN}"}
        await assert_valid_agui_endpoint(srv.url, headers=auth, max_warnings=0)
        proc = await asyncio.create_subprocess_exec(
            str(VALIDATE),
            srv.url,
            "--header",
            f"Authorization: Bearer {TOKEN}",
            "--json",
            "--fail-on",
            "warning",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, out.decode() + err.decode()
        report = json.loads(out)
        assert report["summary"]["errors"] == 0 and report["summary"]["warnings"] == 0
        skipped = {s["rule"] for s in report.get("skipped", [])}
        assert "AGUI505" not in skipped  # the transport rules ran against the live response
    finally:
        await srv.stop()
        await agent.close()
