"""The fuzz campaign: many hostile turns per driver on the stand-in CLI, counted by how each run ended.

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python -m tests.fuzz.campaign --inputs 10000 [--drivers claude,codex] [--seed 1]

For each driver it prints the inputs run, how many ended with exactly one Done within the run's timeout, the
count of each RunError kind (``ok`` for a result), crashes (an exception that reached the engine as an internal
error) and hangs (no Done within the timeout plus a margin), and the seconds taken. Inputs that crashed or hung are
written as JSON lines to ``--failures`` so they can be replayed. Inputs come from the same strategies as the CI
property test (tests/fuzz/frames.py); the property test runs a small sample of them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from adaptor_nb import Agent

from .frames import turn_scripts
from .harness import DRIVERS, counts, make_driver, prompt_for, run_turn

RUN_TIMEOUT = 10.0


def campaign(name: str, inputs: int, seed: int, failures: Path) -> dict[str, Any]:
    loop = asyncio.new_event_loop()
    home = Path(tempfile.mkdtemp(prefix=f"fuzz-{name}-"))

    async def open_agent() -> Agent:
        return Agent(make_driver(name, home), workspace=str(home))

    agent = loop.run_until_complete(open_agent())
    kinds: list[str] = []
    started = time.monotonic()

    @hypothesis_seed(seed)
    @settings(
        max_examples=inputs,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(script=turn_scripts(name))
    def one(script: dict[str, Any]) -> None:
        outcome = loop.run_until_complete(
            run_turn(agent, prompt_for(script["lines"], exit=script["exit"]), RUN_TIMEOUT)
        )
        kinds.append(outcome.kind)
        if outcome.kind == "hang" or outcome.kind.startswith(("crash", "dones")):
            with failures.open("a") as fh:
                fh.write(json.dumps({"driver": name, "kind": outcome.kind, "error": str(outcome.error), **script}))
                fh.write("\n")
        if len(kinds) % 1000 == 0:
            print(f"  {name}: {len(kinds)} inputs, {time.monotonic() - started:.0f} s", flush=True)

    try:
        one()
    finally:
        loop.run_until_complete(agent.close())
        loop.close()
    tally = counts(kinds)
    bad = sum(n for k, n in tally.items() if k == "hang" or k.startswith(("crash", "dones")))
    not_one_done = tally.get("hang", 0) + sum(n for k, n in tally.items() if k.startswith("dones"))
    return {
        "driver": name,
        "inputs": len(kinds),
        "done_within_timeout": len(kinds) - not_one_done,
        "crashes": sum(n for k, n in tally.items() if k.startswith("crash")),
        "hangs": tally.get("hang", 0),
        "bad": bad,
        "kinds": tally,
        "seconds": round(time.monotonic() - started, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=10_000, help="inputs per driver")
    ap.add_argument("--drivers", default=",".join(DRIVERS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--failures", default="fuzz-failures.jsonl")
    args = ap.parse_args()
    failures = Path(args.failures)
    for name in args.drivers.split(","):
        row = campaign(name, args.inputs, args.seed, failures)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
