"""Property: whatever a CLI writes, every run ends with exactly one Done within its timeout, never a crash.

Each driver runs on the stand-in CLI (real process, real pipes, the driver's real reader and translator), one
Agent for many inputs, so the process is reused between turns the way a notebook uses it. Inputs are recorded turns
with fields set to wrong types, removed, frames dropped, repeated, swapped, truncated or mixed with garbage lines
(tests/fuzz/frames.py). ``FUZZ_EXAMPLES`` sets the inputs per driver (default 50; the 10,000-input campaign is
tests/fuzz/campaign.py).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from adaptor_nb import Agent

from .frames import SEEDS, turn_scripts
from .harness import DRIVERS, make_driver, prompt_for, run_turn

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "50"))
RUN_TIMEOUT = 10.0


def test_every_driver_has_seeds() -> None:
    assert all(len(SEEDS[name]) >= 2 for name in DRIVERS), {name: len(SEEDS[name]) for name in DRIVERS}


@pytest.mark.parametrize("name", DRIVERS)
def test_every_run_ends_with_exactly_one_done_within_its_timeout(tmp_path: Path, name: str) -> None:
    loop = asyncio.new_event_loop()

    async def open_agent() -> Agent:
        return Agent(make_driver(name, tmp_path), workspace=str(tmp_path))

    agent = loop.run_until_complete(open_agent())
    kinds: list[str] = []

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(script=turn_scripts(name))
    def check(script: dict[str, Any]) -> None:
        outcome = loop.run_until_complete(
            run_turn(agent, prompt_for(script["lines"], exit=script["exit"]), RUN_TIMEOUT)
        )
        kinds.append(outcome.kind)
        assert outcome.kind != "hang", "no Done within the run's timeout"
        assert not outcome.kind.startswith(("crash", "dones")), (outcome.kind, outcome.error)

    try:
        check()
    finally:
        loop.run_until_complete(agent.close())
        loop.close()
    assert len(kinds) >= EXAMPLES
