"""CodeBuddy Code driver benchmark: turn latency on the real CLI against the fake Chat Completions server.

Run from the repository root::

    .venv/bin/python benchmarks/codebuddy_turns.py [--turns 8]

Warm turns on a Thread's persistent process are timed beside the same CLI driven by hand over stream-json (no
library). Both loops idle 0.3 s between turns, the settle the CLI needs after a ``result``, outside the timed
span. The first turn (spawn, ``initialize``, prompt) is timed both ways too.
Target: the Thread's warm turn <= 1.1x the raw warm turn.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.getcwd())

from adaptor_nb import Agent
from adaptor_nb.drivers import codebuddy
from adaptor_nb.drivers.codebuddy._command import SILENT_ENV
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


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=8)
    args = parser.parse_args()
    cli = find_cli("codebuddy")
    if cli is None:
        raise SystemExit("CodeBuddy Code is missing: pip install 'adaptor_nb[codebuddy]'")
    with FakeChatCompletionsServer() as server:
        raw_first, raw = await raw_turns(cli, server, args.turns)
        drv_first, drv = await driver_turns(cli, server, args.turns)
    raw_med, drv_med = statistics.median(raw), statistics.median(drv)
    print(f"first turn (spawn + initialize + prompt): raw {raw_first:.2f} s, Thread {drv_first:.2f} s")
    print(f"warm turn median of {len(raw)}: raw {raw_med * 1000:.0f} ms, Thread {drv_med * 1000:.0f} ms")
    print(f"ratio Thread/raw: {drv_med / raw_med:.2f}x (target <= 1.1x)")


if __name__ == "__main__":
    asyncio.run(main())
