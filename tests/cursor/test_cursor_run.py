"""The Cursor driver's command line, threads, policy, messages and faults, on the replay stand-in."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import pytest
from _support import alive, drain, of

from adaptor_nb import (
    Agent,
    AgentFailed,
    HumanDecisionModeUnsupportedError,
    InvalidDriverConfigError,
    Notice,
    ProcessInfo,
    ProcessKind,
    RunCancelled,
    TextDelta,
)
from adaptor_nb.drivers import cursor

from .conftest import FIXTURES, SECRET


def spawns(events: list) -> list[ProcessInfo]:
    return [p for p in of(events, ProcessInfo) if p.kind is ProcessKind.SPAWN]


async def test_argv_workspace_and_prompt_on_stdin(make_driver, workspace: Path, tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    driver = make_driver(
        "happy-assistant.jsonl",
        "--replay-log",
        str(log),
        "--replay-expect",
        f"--workspace={workspace}",
        "--replay-expect",
        "--model=gpt-5",
        "--replay-expect",
        "--mode=ask",
        "--replay-forbid",
        "--force",
        model="gpt-5",
        mode="ask",
    )
    events, result, err = await drain(Agent(driver).send("Say hello, secret prompt"))
    assert err is None and result is not None
    call = json.loads(log.read_text())
    assert call["prompt"] == "Say hello, secret prompt" and call["api_key"] is True
    assert "Say hello, secret prompt" not in " ".join(call["argv"])
    assert call["argv"][:3] == ["-p", "--output-format", "stream-json"] and "--stream-partial-output" in call["argv"]
    assert SECRET not in repr(events) and SECRET not in repr(driver)
    assert len(spawns(events)) == 1


async def test_a_thread_resumes_with_the_session_id(make_driver, tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    resumed = str(FIXTURES / "resumed.jsonl")
    driver = make_driver(
        "happy-assistant.jsonl", "--replay-on-resume", f"cursor-happy={resumed}", "--replay-log", str(log)
    )
    async with Agent(driver) as agent:
        thread = agent.thread("t1")
        first = await thread.send("one").result()
        second = await thread.send("two").result()
    assert first.text == "Cursor says hi." and second.text == "Welcome back."
    argvs = [json.loads(line)["argv"] for line in log.read_text().splitlines()]
    assert "--resume" not in argvs[0]
    assert argvs[1][argvs[1].index("--resume") + 1] == "cursor-happy"


async def test_a_failed_run_does_not_replace_the_checkpoint(make_driver, tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    # "two" and "three" fail after system/init of the resumed session (exit 1 without a result line)
    driver = make_driver("happy-assistant.jsonl", "--replay-fail-when", "two|three", "--replay-log", str(log))
    async with Agent(driver) as agent:
        thread = agent.thread("t1")
        await thread.send("one").result()
        with pytest.raises(AgentFailed):
            await thread.send("two").result()
        with pytest.raises(AgentFailed):
            await thread.send("three").result()
    argvs = [json.loads(line)["argv"] for line in log.read_text().splitlines()]
    # the failed second run never replaced the checkpoint: the third run resumes the first session
    assert [a[a.index("--resume") + 1] for a in argvs[1:]] == ["cursor-happy", "cursor-happy"]


async def test_auto_approve_maps_to_force_and_ask_is_refused(make_driver) -> None:
    from adaptor_nb import ApprovalMode, ApprovalPolicy, Policy

    approve = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_APPROVE))
    driver = make_driver("happy-assistant.jsonl", "--replay-expect", "--force")
    assert (await Agent(driver, policy=approve).send("go").result()).text == "Cursor says hi."
    ask = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.ASK))
    with pytest.raises(HumanDecisionModeUnsupportedError) as info:
        await Agent(make_driver("happy-assistant.jsonl"), policy=ask).send("go").result()
    assert "permission" in str(info.value)


def test_invalid_config_fails_before_launch(workspace: Path) -> None:
    with pytest.raises(InvalidDriverConfigError, match="mode"):
        cursor.Driver(cursor.Config(mode="yolo")).validate_config()
    with pytest.raises(InvalidDriverConfigError, match="extra_args"):
        cursor.Driver(cursor.Config(extra_args=["--force"])).validate_config()
    with pytest.raises(InvalidDriverConfigError, match="hook_relay"):
        cursor.Driver(cursor.Config(hook_relay=[""])).validate_config()


def test_a_missing_cli_names_the_command_and_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(InvalidDriverConfigError) as info:
        cursor.Driver().validate_config()
    assert "'agent'" in str(info.value) and "cursor.com/install" in str(info.value)


def test_descriptor_is_truthful() -> None:
    d = cursor.Driver().descriptor()
    assert not d.persistent and d.resume and not d.fork
    assert not d.messages.interrupt and d.messages.continue_mode.value == "resume"
    assert not d.structured_output.native and d.structured_output.prompted
    assert not d.approvals.kinds


async def test_killed_mid_stream_fails_with_partial_text_and_no_process_left(make_driver) -> None:
    events, result, err = await drain(Agent(make_driver("two-messages.jsonl", "--replay-die-after", "3")).send("go"))
    assert isinstance(err, AgentFailed) and result is None
    assert err.details["exit_code"] == -signal.SIGKILL and "killed" in err.message
    assert err.result is not None and err.result.text == "One, "
    assert not alive(spawns(events)[0].data["pid"])


async def test_exit_without_result_and_stderr_noise(make_driver) -> None:
    driver = make_driver("failure.jsonl", "--replay-stderr", "warning: telemetry offline", "--replay-exit", "7")
    _events, _result, err = await drain(Agent(driver).send("go"))
    assert isinstance(err, AgentFailed) and err.details["exit_code"] == 7
    assert "telemetry offline" in err.details["stderr_tail"]


async def test_stderr_noise_with_a_result_succeeds(make_driver) -> None:
    driver = make_driver("happy-assistant.jsonl", "--replay-stderr", "warning: noise")
    result = await Agent(driver).send("go").result()
    assert result.text == "Cursor says hi."


async def test_garbage_and_a_5mb_line(make_driver, tmp_path: Path) -> None:
    big = "x" * (5 * 1024 * 1024)
    lines = [
        '{"type":"system","subtype":"init","session_id":"s-big","model":"m"}',
        "this is not json {",
        json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": big}]}}),
        json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": big, "session_id": "s-big"}),
    ]
    rec = tmp_path / "big.jsonl"
    rec.write_text("\n".join(lines) + "\n")
    events, result, err = await drain(Agent(make_driver(str(rec), partial_output=False)).send("go"))
    assert err is None and result is not None and len(result.text) == len(big)
    assert [n for n in of(events, Notice) if n.metadata.get("code") == "cursor.unparsed_line"]


async def test_garbage_then_death_is_a_run_error(make_driver, tmp_path: Path) -> None:
    rec = tmp_path / "garbage.jsonl"
    rec.write_text('{"type":"assistant","text":"half"}\n<<garbage>>\n')
    _events, _result, err = await drain(Agent(make_driver(str(rec))).send("go"))
    assert isinstance(err, AgentFailed) and err.result is not None and err.result.text == "half"


async def test_cancel_and_timeout_reap_the_process(make_driver) -> None:
    agent = Agent(make_driver("two-messages.jsonl", "--replay-hang-after", "3"))
    stream = agent.send("go")
    events = []
    async for ev in stream.events():
        events.append(ev)
        if isinstance(ev, TextDelta) and ev.text:
            stream.cancel()
    with pytest.raises(RunCancelled):
        await stream.result()
    assert not alive(spawns(events)[0].data["pid"])
    timed = Agent(make_driver("two-messages.jsonl", "--replay-hang-after", "3"), timeout=1.0).send("go")
    events, _result, err = await drain(timed)
    assert isinstance(err, RunCancelled)
    assert not alive(spawns(events)[0].data["pid"])


async def test_supplemental_messages_continue_by_resume(make_driver, tmp_path: Path) -> None:
    from adaptor_nb import Timing

    log = tmp_path / "calls.jsonl"
    resumed = str(FIXTURES / "resumed.jsonl")
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    driver = make_driver(
        "happy-assistant.jsonl",
        "--replay-on-resume",
        f"cursor-happy={resumed}",
        "--replay-log",
        str(log),
        "--replay-gate",
        f"3={gate}",
    )
    async with Agent(driver) as agent:
        stream = agent.send("go")
        events = []
        sent = False
        async for ev in stream.events():
            events.append(ev)
            if not sent and isinstance(ev, TextDelta) and ev.text:
                await stream.send("and one more thing", when=Timing.AFTER_TURN)
                sent = True
                await asyncio.to_thread(lambda: open(gate, "wb").close())  # the replay goes on to its result
        result = await stream.result()
    assert result.text == "Welcome back."
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert "and one more thing" in calls[1]["prompt"] and "--resume" in calls[1]["argv"]
    codes = [n.metadata.get("code") for n in of(events, Notice)]
    assert "cursor_hook_unavailable" in codes


async def test_agent_close_reaps_a_running_turn(make_driver) -> None:
    agent = Agent(make_driver("two-messages.jsonl", "--replay-hang-after", "3"))
    stream = agent.send("go")
    pid = 0
    async for ev in stream.events():
        if isinstance(ev, ProcessInfo) and ev.kind is ProcessKind.SPAWN:
            pid = ev.data["pid"]
        if isinstance(ev, TextDelta) and ev.text:
            break
    await agent.close()
    assert pid and not alive(pid)
    with pytest.raises(RunCancelled):
        await stream.result()
