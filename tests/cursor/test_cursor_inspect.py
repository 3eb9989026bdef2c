"""Inspection and structured output of the Cursor driver, on the replay stand-in."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from adaptor_nb import Agent, PolicyViolation
from adaptor_nb.driver import EnvironmentStatus
from adaptor_nb.drivers import cursor
from adaptor_nb.testing import cursor_replay_command


async def test_probe_reports_cli_version_and_key_without_a_model_task(workspace) -> None:
    driver = cursor.Driver(
        cursor.Config(command=cursor_replay_command("@answer"), secret_env={"CURSOR_API_KEY": "k-secret"})
    )
    report = await driver.probe_environment()
    assert report.status is EnvironmentStatus.OK
    assert report.version == "2026.01.01-replay" and report.auth_source == "CURSOR_API_KEY"
    assert report.messages is not None and not report.messages.interrupt
    assert "k-secret" not in repr(report)


async def test_probe_without_credentials_is_degraded(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CURSOR_API_KEY", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    report = await cursor.Driver(cursor.Config(command=cursor_replay_command("@answer"))).probe_environment()
    assert report.status is EnvironmentStatus.DEGRADED and not report.auth_source


async def test_probe_of_a_missing_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    report = await cursor.Driver().probe_environment()
    assert report.status is EnvironmentStatus.MISSING and "cursor.com/install" in report.checks[0].detail


async def test_models_are_listed() -> None:
    models = await cursor.Driver(cursor.Config(command=cursor_replay_command("@answer"))).list_models()
    assert [m.id for m in models] == ["auto", "gpt-5", "sonnet-4.5"]
    assert [m.id for m in models if m.default] == ["auto"]


async def test_structured_output_by_prompting_with_local_validation(workspace) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    cfg = cursor.Config(command=cursor_replay_command("@answer"), cwd=str(workspace))
    async with Agent(cursor.Driver(cfg)) as agent:
        result = await agent.send('Reply with exactly: {"n": 3}', schema=schema).result()
        assert result.structured == {"n": 3}
        with pytest.raises(PolicyViolation):
            await agent.send("Reply with exactly: not json", schema=schema).result()


def test_the_replay_refuses_a_prompt_on_the_command_line(workspace) -> None:
    import subprocess

    argv = [*cursor_replay_command("@answer"), "-p", "--output-format", "stream-json", "--workspace", str(workspace)]
    done = subprocess.run([*argv, "hello"], input=b"x", capture_output=True, check=False)
    assert done.returncode == 1 and b"stdin" in done.stderr
    done = subprocess.run([*argv, "--bogus"], input=b"x", capture_output=True, check=False)
    assert done.returncode == 1 and b"unknown option" in done.stderr


@pytest.mark.cursor_live
async def test_live_cursor_answers_one_short_prompt(tmp_path) -> None:
    key = os.environ.get("CURSOR_API_KEY")
    cli = shutil.which("agent") or shutil.which("cursor-agent")
    if not key or not cli:
        pytest.skip("set CURSOR_API_KEY and put Cursor Agent's `agent` on PATH to run the live check")
    cfg = cursor.Config(command=[cli], cwd=str(tmp_path), secret_env={"CURSOR_API_KEY": key}, mode="ask")
    async with Agent(cursor.Driver(cfg)) as agent:
        result = await agent.send("Reply with exactly: CURSOR_LIVE_OK").result()
    assert "CURSOR_LIVE_OK" in result.text
    assert sys.version_info >= (3, 11)
