"""The example third-party driver of docs/drivers/writing-a-driver.md passes the public conformance suite."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest
from conformance_table import check_column

from adaptor_nb import Agent, AgentFailed
from adaptor_nb.driver import EnvironmentStatus, Invocation
from adaptor_nb.testing import ConformanceCase, run_driver_conformance

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "echo_driver"
sys.path.insert(0, str(EXAMPLE))

import echo_driver  # noqa: E402

_RUN = re.compile(r"adaptor_nb conformance check '[^']*', run (\d+)\.")


def make_factory() -> object:
    """A fresh echo Driver per check whose held runs wait at the check's Hold until the suite releases it."""

    def factory(case: ConformanceCase) -> echo_driver.Driver:
        async def gate(inv: Invocation) -> None:
            match = _RUN.search(inv.prompt)
            index = int(match.group(1)) - 1 if match else 0
            if index < len(case.runs) and case.runs[index].hold:
                await asyncio.to_thread(case.hold.wait, 60)

        return echo_driver.Driver(echo_driver.Config(gate=gate))

    return factory


async def test_the_echo_driver_passes_the_conformance_suite() -> None:
    report = await run_driver_conformance(make_factory(), timeout=30, raise_on_failure=False)
    print(report)
    assert report.ok, str(report)
    assert report.driver == "echo"
    assert {"event_ordering", "results", "policy_rejected", "structured_output", "cancellation"} <= set(report.passed)
    check_column(report, "echo")  # the committed clause table matches this run


async def test_the_echo_driver_answers_through_an_agent() -> None:
    async with Agent(echo_driver.Driver()) as agent:
        result = await agent.send("Say hello. Reply with exactly: hello there").result()
    assert result.text == "hello there" and result.provider == "echo"
    assert result.usage is not None and result.usage.output_tokens == 2


async def test_a_failing_cli_fails_the_run() -> None:
    driver = echo_driver.Driver(echo_driver.Config(command=[sys.executable, echo_driver.CLI, "--fail"]))
    async with Agent(driver) as agent:
        with pytest.raises(AgentFailed) as info:
            await agent.send("hi").result()
    assert "asked to fail" in str(info.value.details.get("stderr_tail", ""))


async def test_the_echo_probe_is_ok() -> None:
    report = await echo_driver.Driver().probe_environment()
    assert report.status is EnvironmentStatus.OK
