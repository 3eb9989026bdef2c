"""Replaying a recorded 100-turn Claude Code thread, beside the reference driver's scripted run of the same replies.

Run from the repository root::

    .venv/bin/python benchmarks/replay.py [--turns 100] [--repeat 3] [--cassette PATH]

Without ``--cassette`` it first records the thread: the real Claude CLI against the fake Anthropic server, one
Thread, ``--turns`` sends, each answered with five text chunks. Then, alternating rounds, it times

* replay: the same thread on the Claude driver through the cassette in mode ``none`` (no CLI, no server: a
  stand-in process plays the recorded frames to the real driver code), and
* reference: the reference driver scripted to give the same five chunks per turn,

each consumed with ``Stream.events()`` until Done, and reports wall and CPU (this process) time per event and per
turn. Target: replay <= 1.5x the reference per event (wall time). No assertion: figures only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from adaptor_nb import Agent
from adaptor_nb.cassette import Cassette
from adaptor_nb.drivers import claude, reference
from adaptor_nb.drivers.reference._scenario import Text, Turn, scenario
from adaptor_nb.testing import FakeAnthropicServer, find_cli

CHUNKS = 5
PROMPT = f"[[slow {CHUNKS} 0]] [[say the recorded answer]]"
ANSWER = "".join(f"the recorded answer ({i})" for i in range(CHUNKS))
QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_MAX_RETRIES": "0",
}


def _config(command: list[str], scratch: Path, url: str) -> claude.Config:
    home, work = scratch / "home", scratch / "work"
    home.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    return claude.Config(
        command=command,
        cwd=str(work),
        env={"HOME": str(home), "ANTHROPIC_BASE_URL": url, **QUIET},
        secret_env={"ANTHROPIC_API_KEY": "sk-ant-benchmark-only-0123456789"},
        bare=True,
        startup_timeout=60.0,
    )


async def _thread(agent: Agent, turns: int) -> int:
    """Send ``turns`` prompts on one thread; returns the events seen."""
    thread = agent.thread("bench")
    events = 0
    for _ in range(turns):
        async for _event in thread.send(PROMPT).events():
            events += 1
    return events


async def record(path: Path, turns: int, scratch: Path) -> None:
    cli = find_cli("claude")
    if cli is None:
        raise SystemExit("recording needs the claude CLI (bash scripts/setup.sh), or pass --cassette")
    with FakeAnthropicServer() as fake, Cassette(path, mode="rewrite"):
        agent = Agent(claude.Driver(_config([str(cli)], scratch, fake.url)))
        try:
            await _thread(agent, turns)
        finally:
            await agent.close()


async def replay_round(path: Path, turns: int, scratch: Path) -> tuple[float, float, int]:
    with Cassette(path, mode="none"):
        agent = Agent(claude.Driver(_config([str(scratch / "no-claude-here")], scratch, "http://127.0.0.1:9")))
        try:
            wall, cpu = time.perf_counter(), time.process_time()
            events = await _thread(agent, turns)
            return time.perf_counter() - wall, time.process_time() - cpu, events
        finally:
            await agent.close()


async def reference_round(turns: int) -> tuple[float, float, int]:
    script = scenario(*[Turn(Text(ANSWER, chunk=len(ANSWER) // CHUNKS + 1), usage=(10, 5)) for _ in range(turns)])
    agent = Agent(reference.Driver(reference.Config(scenario=script)))
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        events = await _thread(agent, turns)
        return time.perf_counter() - wall, time.process_time() - cpu, events
    finally:
        await agent.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cassette", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        path = args.cassette or scratch / "thread.jsonl"
        if not path.exists():
            t0 = time.perf_counter()
            asyncio.run(record(path, args.turns, scratch))
            print(f"recorded {args.turns} turns in {time.perf_counter() - t0:.1f} s: {path.stat().st_size:,} bytes")
        rows: dict[str, list[tuple[float, float, int]]] = {"replay": [], "reference": []}
        for _ in range(args.repeat):
            rows["reference"].append(asyncio.run(reference_round(args.turns)))
            rows["replay"].append(asyncio.run(replay_round(path, args.turns, scratch)))
    print(f"load average {os.getloadavg()[0]:.1f}; {args.turns} turns; median of {args.repeat} rounds")
    per_event: dict[str, float] = {}
    for name, results in rows.items():
        wall = statistics.median(r[0] for r in results)
        cpu = statistics.median(r[1] for r in results)
        events = results[0][2]
        per_event[name] = wall / events
        print(
            f"{name:9}  {events:5} events  wall {wall:6.2f} s  {wall / events * 1e6:8.1f} µs/event  "
            f"{wall / args.turns * 1e3:7.1f} ms/turn  cpu {cpu / events * 1e6:8.1f} µs/event"
        )
    ratio = per_event["replay"] / per_event["reference"]
    print(f"replay / reference per event: {ratio:.2f}x (target <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
