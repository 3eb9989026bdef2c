"""Record a Claude Code run against the fake Anthropic server, then replay it with no CLI and no server."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import psutil
import pytest
from _pictures import png
from _support import drain, require_cli

from adaptor_nb import Agent, ApprovalRequest, Notice, ProcessInfo, ProcessKind, ToolCall, ToolResult
from adaptor_nb.cassette import Cassette, CassetteError
from adaptor_nb.drivers import claude
from adaptor_nb.testing import FakeAnthropicServer

SECRET = "sk-ant-cassette-secret-0123456789"
QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_MAX_RETRIES": "0",
}
PROMPT = 'Run it. [[tool Bash {"command": "echo cassette-ok", "description": "say ok"}]] [[say all done]]'


def _config(command: list[str], home: Path, workspace: Path, url: str) -> claude.Config:
    return claude.Config(
        command=command,
        cwd=str(workspace),
        env={"HOME": str(home), "ANTHROPIC_BASE_URL": url, **QUIET},
        secret_env={"ANTHROPIC_API_KEY": SECRET},
        bare=True,
        startup_timeout=30.0,
        grace_period=1.0,
    )


def _kinds(events: list[Any]) -> list[str]:
    return [type(e).__name__ for e in events if not isinstance(e, ProcessInfo | Notice)]


def _summary(events: list[Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for e in events:
        if isinstance(e, ToolCall) and e.args is not None:
            out.append(("call", f"{e.name} {json.dumps(e.args, sort_keys=True)}"))
        elif isinstance(e, ToolResult):
            out.append(("result", json.dumps(e.result, sort_keys=True)))
    return out


async def _run(config: claude.Config, workspace: Path, *prompts: str) -> list[tuple[list[Any], Any, Any]]:
    agent = Agent(claude.Driver(config), workspace=str(workspace), on_approval=None)
    try:
        thread = agent.thread("cassette")
        return [await drain(thread.send(p)) for p in prompts]
    finally:
        await agent.close()


def psutil_pid_max() -> int:
    return int(Path("/proc/sys/kernel/pid_max").read_text())


@pytest.fixture
def cli() -> str:
    return require_cli("claude", "run `bash scripts/setup.sh`")


async def test_a_recorded_claude_thread_replays_without_cli_or_server(
    cli: str, tmp_path: Path, home: Path, workspace: Path
) -> None:
    tape = tmp_path / "claude.jsonl"
    with FakeAnthropicServer() as fake, Cassette(tape, mode="rewrite") as rec:
        live = await _run(_config([cli], home, workspace, fake.url), workspace, PROMPT, "[[say second turn]]")
        url = fake.url
    assert rec.recorded == 2
    text = tape.read_text()
    assert SECRET not in text and str(workspace) not in text and str(home) not in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["cassette"] == "adaptor_nb-cassette"
    runs = [line for line in lines if "run" in line]
    assert [r["run"]["turn"] for r in runs] == [1, 2] and runs[0]["processes"] == ["p1"]

    # The server is gone and the command names no installed CLI: only the recording can answer.
    missing = str(tmp_path / "no-such-dir" / "claude")
    children_before = {p.pid for p in psutil.Process().children(recursive=True)}
    with Cassette(tape, mode="none") as play:
        replayed = await _run(_config([missing], home, workspace, url), workspace, PROMPT, "[[say second turn]]")
    assert play.replayed == 2 and play.recorded == 0
    # Played in this process: no process was started, and the pid the events carry names no process at all.
    spawned = [e for e in replayed[0][0] if isinstance(e, ProcessInfo) and e.kind == ProcessKind.SPAWN]
    assert len(spawned) == 1 and spawned[0].data["pid"] > psutil_pid_max()
    assert not ({p.pid for p in psutil.Process().children(recursive=True)} - children_before)
    for (ev_live, res_live, err_live), (ev_play, res_play, err_play) in zip(live, replayed, strict=True):
        assert err_live is None and err_play is None
        assert res_play.text == res_live.text
        assert res_play.usage.output_tokens == res_live.usage.output_tokens
        assert _summary(ev_play) == _summary(ev_live)
        assert _kinds(ev_play) == _kinds(ev_live)  # stderr chunks interleave as the scheduler has it
    assert replayed[0][1].text == "all done" and any("cassette-ok" in text for _, text in _summary(replayed[0][0]))


async def test_a_prompt_without_a_recording_fails_naming_it(
    cli: str, tmp_path: Path, home: Path, workspace: Path
) -> None:
    tape = tmp_path / "claude.jsonl"
    with FakeAnthropicServer() as fake, Cassette(tape, mode="rewrite"):
        await _run(_config([cli], home, workspace, fake.url), workspace, "[[say one]]")
        url = fake.url
    with Cassette(tape, mode="none"):
        [(events, _result, err)] = await _run(_config([cli], home, workspace, url), workspace, "[[say changed]]")
    assert isinstance(err, CassetteError)
    assert "the prompt changed" in str(err) and "[[say changed]]" in str(err) and "[[say one]]" in str(err)
    assert "thread 'cassette' turn 1" in str(err)
    assert not [e for e in events if isinstance(e, ProcessInfo)]  # refused before any process started


async def test_an_approval_and_its_answer_are_recorded_and_replayed(
    cli: str, tmp_path: Path, home: Path, workspace: Path
) -> None:
    tape = tmp_path / "approval.jsonl"
    target = workspace / "approved.txt"
    prompt = f"make it [[tool Bash {json.dumps({'command': f'touch {target}', 'description': 'make it'})}]]"
    seen: list[ApprovalRequest] = []

    def approve(req: ApprovalRequest) -> None:
        seen.append(req)
        req.approve()

    async def once(config: claude.Config) -> tuple[list[Any], Any, Any]:
        agent = Agent(claude.Driver(config), workspace=str(workspace), on_approval=approve)
        try:
            return await drain(agent.send(prompt))
        finally:
            await agent.close()

    with FakeAnthropicServer() as fake, Cassette(tape, mode="rewrite"):
        _, live, err = await once(_config([cli], home, workspace, fake.url))
        url = fake.url
    assert err is None and target.exists() and len(seen) == 1
    frames = [json.loads(line) for line in tape.read_text().splitlines()]
    asked = [f for f in frames if f.get("out", {}).get("type") == "control_request"]
    answered = [f for f in frames if f.get("in", {}).get("type") == "control_response"]
    assert asked and asked[0]["out"]["request"]["subtype"] == "can_use_tool"
    assert answered and answered[0]["in"]["response"]["response"]["behavior"] == "allow"
    assert str(workspace) not in tape.read_text()

    target.unlink()
    with Cassette(tape, mode="none"):
        events, replayed, err = await once(_config([str(tmp_path / "none")], home, workspace, url))
    assert err is None and replayed.text == live.text
    assert len(seen) == 2 and seen[1].details["tool_name"] == "Bash"  # the policy is asked again on replay
    assert str(target) in seen[1].details["input"]["command"]  # the recorded path is put back as this machine's
    assert not target.exists()  # nothing ran: the answer came from the recording
    assert [e for e in events if isinstance(e, ApprovalRequest)]


async def test_a_prompt_with_images_is_recorded_by_digest_and_replays(
    cli: str, tmp_path: Path, home: Path, workspace: Path
) -> None:
    picture = png(6, 6, rgb=(9, 99, 199))
    encoded = base64.b64encode(picture).decode()
    tape = tmp_path / "images.jsonl"

    async def send(config: claude.Config, image: bytes) -> tuple[list[Any], Any, Any]:
        async with Agent(claude.Driver(config), workspace=str(workspace)) as agent:
            return await drain(agent.send("describe [[say a blue square]]", images=[image]))

    with FakeAnthropicServer() as fake, Cassette(tape, mode="rewrite") as rec:
        _, live, _ = await send(_config([cli], home, workspace, fake.url), picture)
        url = fake.url
        assert fake.message_requests[-1].prompt_images == [("image/png", picture)]
    assert rec.recorded == 1 and live.text == "a blue square"
    text = tape.read_text()
    assert encoded not in text and encoded[:40] not in text
    assert "sha256:" + hashlib.sha256(picture).hexdigest() in text
    missing = str(tmp_path / "no-such-dir" / "claude")
    with Cassette(tape, mode="none") as play:
        _, replayed, _ = await send(_config([missing], home, workspace, url), picture)
        _, _, changed = await send(_config([missing], home, workspace, url), png(6, 6, rgb=(1, 2, 3)))
    assert play.replayed == 1 and replayed.text == "a blue square"
    assert isinstance(changed, CassetteError)  # another image asks another question: no recording answers it
