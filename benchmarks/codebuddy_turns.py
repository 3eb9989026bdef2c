"""CodeBuddy Code driver benchmark: turn latency on the real CLI against the fake Chat Completions server.

Run from the repository root::

    .venv/bin/python benchmarks/codebuddy_turns.py [--turns 8] [--rounds 5] [--compare /path/to/other/tree]

Warm turns on a Thread's persistent process are timed beside the same CLI driven by hand over stream-json (no
library). Both loops idle 0.3 s between turns, the settle the CLI needs after a ``result``, outside the timed
span. The first turn (spawn, ``initialize``, prompt) is timed both ways too, and beside it the CLI's own floor for
what the driver adds before a first turn: one ``--version`` (the probe that decides the message capabilities).
Each round runs in a fresh interpreter (a first turn is first only once per process), raw and Thread alternating
inside it; with ``--compare`` the rounds alternate between this tree and the other one. The CLI's ``--version``
answer is kept on disk after the first run on a machine; ``--cold`` gives every round an empty cache (a first-ever
run, which pays the probe).
Targets: the Thread's warm turn <= 1.1x the raw warm turn; its first turn <= 1.1x the raw first turn.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.getcwd())

from adaptor_nb import Agent
from adaptor_nb.drivers import codebuddy

try:
    from adaptor_nb.drivers.codebuddy._driver import SILENT_ENV
except ImportError:  # a tree from before the Claude-family kit
    from adaptor_nb.drivers.codebuddy._command import SILENT_ENV  # type: ignore[attr-defined,no-redef]
from adaptor_nb.testing import FakeChatCompletionsServer, find_cli

KEY = "sk-bench"


def env_for(server: FakeChatCompletionsServer, home: str) -> dict[str, str]:
    return {"HOME": home, "CODEBUDDY_BASE_URL": server.url, "CODEBUDDY_MAX_RETRIES": "0"}


async def raw_turns(cli: str, server: FakeChatCompletionsServer, turns: int) -> tuple[float, list[float]]:
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as ws:
        env = {**os.environ, **SILENT_ENV, **env_for(server, home), "CODEBUDDY_API_KEY": KEY}
        argv = [cli, "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        argv += ["--setting-sources", "none", "--include-partial-messages"]
        t0 = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=ws, env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=1 << 24
        )
        assert proc.stdin is not None and proc.stdout is not None
        init = {"type": "control_request", "request_id": "i1", "request": {"subtype": "initialize", "hasPrompt": True}}
        proc.stdin.write((json.dumps(init) + "\n").encode())
        while json.loads(await proc.stdout.readline()).get("type") != "control_response":
            pass
        times: list[float] = []
        first = 0.0
        for n in range(turns):
            if n:
                await asyncio.sleep(0.3)  # the settle the CLI needs after a result
            start = time.perf_counter() if n else t0
            line = {"type": "user", "session_id": "", "message": {"role": "user", "content": f"[[say t{n}]]"}}
            proc.stdin.write((json.dumps(line) + "\n").encode())
            while json.loads(await proc.stdout.readline()).get("type") != "result":
                pass
            elapsed = time.perf_counter() - start
            if n:
                times.append(elapsed)
            else:
                first = elapsed
        proc.terminate()
        await proc.wait()
        return first, times


async def driver_turns(cli: str, server: FakeChatCompletionsServer, turns: int) -> tuple[float, list[float]]:
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as ws:
        cfg = codebuddy.Config(command=[cli], env=env_for(server, home), secret_env={"CODEBUDDY_API_KEY": KEY})
        async with Agent(codebuddy.Driver(cfg), workspace=ws) as agent:
            thread = agent.thread("bench")
            times: list[float] = []
            first = 0.0
            for n in range(turns):
                if n:
                    await asyncio.sleep(0.3)  # same idle gap as the raw loop: the settle is not charged to either
                start = time.perf_counter()
                await thread.send(f"[[say t{n}]]").result()
                elapsed = time.perf_counter() - start
                if n:
                    times.append(elapsed)
                else:
                    first = elapsed
            return first, times


async def version_floor(cli: str) -> float:
    """One ``codebuddy-headless --version``: what a first run's capability probe costs."""
    t0 = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(cli, "--version", stdout=asyncio.subprocess.DEVNULL)
    await proc.wait()
    return time.perf_counter() - t0


async def one_round(turns: int) -> dict[str, float]:
    cli = find_cli("codebuddy")
    if cli is None:
        raise SystemExit("CodeBuddy Code is missing: pip install 'adaptor_nb[codebuddy]'")
    with FakeChatCompletionsServer() as server:
        raw_first, raw = await raw_turns(cli, server, turns)
        drv_first, drv = await driver_turns(cli, server, turns)
        floor = await version_floor(cli)
    return {
        "raw_first": raw_first,
        "drv_first": drv_first,
        "raw_warm": statistics.median(raw),
        "drv_warm": statistics.median(drv),
        "version": floor,
    }


def run_round(tree: str, turns: int, cold: bool) -> dict[str, float]:
    """One round in a fresh interpreter, importing adaptor_nb from ``tree``; ``cold``: with no kept CLI version."""
    script = os.path.abspath(__file__)  # this script in every tree, with that tree's package
    env = {**os.environ, "PYTHONPATH": tree}
    if cold:
        env["ADAPTOR_NB_CACHE_DIR"] = tempfile.mkdtemp(prefix="adaptor_nb-bench-cache-")
    out = subprocess.run(
        [sys.executable, script, "--one-round", "--turns", str(turns)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    figures: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return figures


def report(name: str, rounds: list[dict[str, float]]) -> None:
    first = [r["drv_first"] / r["raw_first"] for r in rounds]
    warm = [r["drv_warm"] / r["raw_warm"] for r in rounds]
    med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    print(f"{name}: {len(rounds)} rounds, medians")
    print(
        f"  first turn: raw {med['raw_first']:.2f} s, Thread {med['drv_first']:.2f} s, "
        f"{statistics.median(first):.2f}x raw ({min(first):.2f}-{max(first):.2f}; target <= 1.1x)"
    )
    print(f"    the CLI's --version (a first run's probe) in the same rounds: {med['version']:.2f} s")
    print(
        f"  warm turn: raw {med['raw_warm'] * 1000:.0f} ms, Thread {med['drv_warm'] * 1000:.0f} ms, "
        f"{statistics.median(warm):.2f}x raw ({min(warm):.2f}-{max(warm):.2f}; target <= 1.1x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--compare", default="", help="another tree to alternate with, e.g. a worktree of an old commit"
    )
    parser.add_argument("--cold", action="store_true", help="no CLI version kept from earlier runs (a first-ever run)")
    parser.add_argument("--one-round", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_round:
        print(json.dumps(asyncio.run(one_round(args.turns))))
        return
    trees = {"this tree": os.getcwd()}
    if args.compare:
        trees["compared tree"] = os.path.abspath(args.compare)
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for n in range(args.rounds):
        order = list(trees.items()) if n % 2 == 0 else list(reversed(trees.items()))
        for name, tree in order:
            r = run_round(tree, args.turns, args.cold)
            results[name].append(r)
            print(
                f"round {n + 1} {name}: first {r['drv_first']:.2f} s vs raw {r['raw_first']:.2f} s "
                f"({r['drv_first'] / r['raw_first']:.2f}x), warm {r['drv_warm'] * 1000:.0f} ms vs "
                f"{r['raw_warm'] * 1000:.0f} ms ({r['drv_warm'] / r['raw_warm']:.2f}x), --version {r['version']:.2f} s",
                flush=True,
            )
    for name, rounds in results.items():
        report(name, rounds)


if __name__ == "__main__":
    main()
