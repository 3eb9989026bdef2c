"""Cursor on the replay stand-in: a refused ``--resume`` (a new chat, an error result, or an error on stderr) is a
rejected resume with one fallback, and declared MCP servers live in ``.cursor/mcp.json`` only while the run's
process does."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from _support import drain, of

from adaptor_nb import Agent, AgentFailed, Notice, ResumeRejectedError, mcp
from adaptor_nb.threadstore import MemoryStore

from .conftest import FIXTURES

HAPPY = "happy-assistant.jsonl"  # its session is "cursor-happy"


def calls(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.parametrize(
    ("on_resume", "extra"),
    [
        (str(FIXTURES / "resume-fresh-chat.jsonl"), ()),
        (str(FIXTURES / "resume-unknown-error.jsonl"), ()),
        ("/dev/null", ("--replay-stderr", "Error: session cursor-happy does not exist")),
    ],
    ids=["new-chat", "error-result", "stderr"],
)
async def test_a_refused_resume_falls_back_once_to_a_fresh_session(
    make_driver, tmp_path: Path, on_resume: str, extra: tuple[str, ...]
) -> None:
    log = tmp_path / "calls.jsonl"
    store = MemoryStore()
    options = ("--replay-on-resume", f"cursor-happy={on_resume}", "--replay-log", str(log), *extra)
    driver = make_driver(HAPPY, *options)
    async with Agent(driver, thread_store=store) as first:
        r1 = await first.thread("t").send("remember this").result()
    async with Agent(driver, thread_store=store) as second:
        events, r2, err = await drain(second.thread("t").send("hello again"))
    assert r1.text == "Cursor says hi."
    assert err is None and r2 is not None and r2.text == "Cursor says hi."  # the fresh session's answer
    notes = [n for n in of(events, Notice) if n.kind == "thread.continuity"]
    assert len(notes) == 1 and notes[0].data["reason"] == "resume_rejected"
    argvs = [c["argv"] for c in calls(log)]
    assert len(argvs) == 3  # first run, the refused resume, exactly one fresh fallback
    assert "--resume" not in argvs[0] and "--resume" not in argvs[2]
    assert argvs[1][argvs[1].index("--resume") + 1] == "cursor-happy"
    # The answer of the wrong chat never reached the host.
    assert "I have no earlier context." not in repr(events)


async def test_resume_only_fails_instead_of_starting_fresh(make_driver, tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    store = MemoryStore()
    fresh = str(FIXTURES / "resume-fresh-chat.jsonl")
    driver = make_driver(HAPPY, "--replay-on-resume", f"cursor-happy={fresh}", "--replay-log", str(log))
    async with Agent(driver, thread_store=store) as first:
        await first.thread("t").send("remember this").result()
    async with Agent(driver, thread_store=store) as second:
        _, r2, err = await drain(second.thread("t", resume_only=True).send("hello again"))
    assert r2 is None and isinstance(err, ResumeRejectedError)
    assert "cursor-happy" in str(err) and "cursor-new-chat" in str(err)
    assert len(calls(log)) == 2


async def test_an_unrelated_failure_on_resume_is_not_taken_for_a_refused_resume(make_driver, tmp_path: Path) -> None:
    driver = make_driver(HAPPY, "--replay-fail-when", "two")  # init of the same session, then exit 1 with stderr
    async with Agent(driver) as agent:
        thread = agent.thread("t")
        await thread.send("one").result()
        _, result, err = await drain(thread.send("two"))
    assert result is None and isinstance(err, AgentFailed) and not isinstance(err, ResumeRejectedError)


ECHO = str(Path(__file__).resolve().parent.parent / "fixtures" / "mcp_echo_server.py")
SECRET = "cursor-mcp-secret-5d21"


def servers() -> list[mcp.Stdio | mcp.HTTP]:
    return [
        mcp.Stdio("echo", sys.executable, args=[ECHO], env={"ECHO_SECRET": SECRET}),
        mcp.HTTP("remote", "http://127.0.0.1:9/mcp", headers={"X-Api-Key": SECRET + "-header"}),
    ]


async def test_declared_servers_are_in_the_project_file_while_the_cli_runs(
    make_driver, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "calls.jsonl"
    driver = make_driver(
        HAPPY,
        "--replay-log",
        str(log),
        "--replay-expect",
        "--approve-mcps",
        "--replay-expect-mcp",
        "echo=ENV",  # the server is declared and every ${env:VAR} it names is set for the CLI
        "--replay-expect-mcp",
        "remote=ENV",
    )
    async with Agent(driver, mcp=servers()) as agent:
        events, result, err = await drain(agent.send("use the tools"))
    assert err is None and result is not None
    (call,) = calls(log)
    doc = call["mcp_json"]
    assert isinstance(doc, dict)
    echo, remote = doc["mcpServers"]["echo"], doc["mcpServers"]["remote"]
    assert (echo["command"], echo["args"]) == (sys.executable, [ECHO])
    assert echo["env"]["ECHO_SECRET"].startswith("${env:") and remote["url"] == "http://127.0.0.1:9/mcp"
    assert remote["headers"]["X-Api-Key"].startswith("${env:")
    # The secrets are in no file, event or log; the file is gone with the run, and so is the .cursor/ it needed.
    assert SECRET not in log.read_text() and SECRET not in repr(events) + repr(result.transcript())
    assert not (workspace / ".cursor").exists()


async def test_the_users_own_project_file_is_put_back_as_it_was(make_driver, workspace: Path, tmp_path: Path) -> None:
    own = b'{"mcpServers": {"mine": {"command": "my-server"}}}  \n'
    (workspace / ".cursor").mkdir()
    (workspace / ".cursor" / "mcp.json").write_bytes(own)
    (workspace / ".cursor" / "rules.md").write_text("keep me")
    log = tmp_path / "calls.jsonl"
    driver = make_driver(HAPPY, "--replay-log", str(log))
    async with Agent(driver) as agent:
        during = await agent.send("with servers", mcp=servers()[:1]).result()
        inherit = await agent.send("without").result()
    assert during.text == inherit.text == "Cursor says hi."
    first, second = calls(log)
    assert list(first["mcp_json"]["mcpServers"]) == ["echo"]  # type: ignore[index]
    assert second["mcp_json"] == json.loads(own)  # mcp=None: the user's file is what the CLI sees
    assert (workspace / ".cursor" / "mcp.json").read_bytes() == own
    assert sorted(p.name for p in (workspace / ".cursor").iterdir()) == ["mcp.json", "rules.md"]


async def test_the_project_file_is_restored_after_a_failed_run(make_driver, workspace: Path) -> None:
    driver = make_driver("failure.jsonl")
    async with Agent(driver, mcp=servers()[:1]) as agent:
        _, result, err = await drain(agent.send("fails"))
    assert result is None and isinstance(err, AgentFailed)
    assert not (workspace / ".cursor").exists()


async def test_a_leftover_from_a_crashed_process_is_undone_first(make_driver, workspace: Path, tmp_path: Path) -> None:
    # What a process killed mid-run leaves: our file in place and the user's original beside it.
    own = b'{"mcpServers": {}}\n'
    cursor_dir = workspace / ".cursor"
    cursor_dir.mkdir()
    (cursor_dir / "mcp.json").write_text('{"mcpServers": {"stale": {"command": "x"}}}')
    (cursor_dir / "mcp.json.adaptor_nb-original").write_bytes(own)
    log = tmp_path / "calls.jsonl"
    driver = make_driver(HAPPY, "--replay-log", str(log))
    async with Agent(driver) as agent:
        await agent.send("with servers", mcp=servers()[:1]).result()
    (call,) = calls(log)
    assert list(call["mcp_json"]["mcpServers"]) == ["echo"]  # type: ignore[index]
    assert (cursor_dir / "mcp.json").read_bytes() == own
    assert sorted(p.name for p in cursor_dir.iterdir()) == ["mcp.json"]


async def test_an_empty_server_list_hides_the_project_servers_for_the_run(
    make_driver, workspace: Path, tmp_path: Path
) -> None:
    own = b'{"mcpServers": {"mine": {"command": "my-server"}}}\n'
    (workspace / ".cursor").mkdir()
    (workspace / ".cursor" / "mcp.json").write_bytes(own)
    log = tmp_path / "calls.jsonl"
    async with Agent(make_driver(HAPPY, "--replay-log", str(log))) as agent:
        await agent.send("no servers", mcp=[]).result()
    (call,) = calls(log)
    assert call["mcp_json"] == {"mcpServers": {}} and "--approve-mcps" in call["argv"]  # type: ignore[operator]
    assert (workspace / ".cursor" / "mcp.json").read_bytes() == own
