"""Bad agents end the run with a clear RunError within bounded time, keep the stderr tail, and leave no process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from adaptor_nb import Agent, RunError
from adaptor_nb.drivers import acp

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
