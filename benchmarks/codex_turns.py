"""Codex turn latency: the driver on a persistent Thread and on fresh processes, beside the raw app-server.

Everything runs against the fake OpenAI Responses server on 127.0.0.1 (in its own process, so it does not compete
with the measured client for the GIL), so the figures are the cost of Codex and of this library, not of a model.
Run from the repository root::

    .venv/bin/python benchmarks/codex_turns.py [--turns 20] [--fresh 8]

Baseline: the same warm turn driven over raw JSON-RPC without the library (target: driver <= 1.1x raw).
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
from pathlib import Path
from typing import Any

from adaptor_nb import Agent
from adaptor_nb.drivers.codex import Config, Driver
from adaptor_nb.drivers.codex._home import provider_settings, write_codex_home
from adaptor_nb.testing import find_cli

KEY_ENV = "FAKE_OPENAI_API_KEY"


class RawAppServer:
    """app-server driven by hand: newline-delimited JSON-RPC, no library code."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.next_id = 0

    @classmethod
    async def start(cls, codex: str, env: dict[str, str], cwd: str) -> RawAppServer:
        proc = await asyncio.create_subprocess_exec(
            codex, "app-server", stdin=-1, stdout=-1, stderr=asyncio.subprocess.DEVNULL, env=env, cwd=cwd,
            limit=1 << 26,
        )  # fmt: skip
        return cls(proc)

    async def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        await self.proc.stdin.drain()

    async def request(self, method: str, params: dict[str, Any]) -> int:
        self.next_id += 1
        await self.send({"id": self.next_id, "method": method, "params": params})
        return self.next_id

    async def until(self, done: Any) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while True:
            message = json.loads(await self.proc.stdout.readline())
            if done(message):
                return message  # type: ignore[no-any-return]

    async def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        await self.proc.wait()


SERVE_FAKE = """
import sys
from adaptor_nb.testing import FakeOpenAIServer
with FakeOpenAIServer() as server:
    print(server.base_url, flush=True)
    sys.stdin.read()
"""


async def start_fake() -> tuple[asyncio.subprocess.Process, str]:
    """Run the fake OpenAI server in a child process; returns it and its base URL."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", SERVE_FAKE, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None
    base_url = (await proc.stdout.readline()).decode().strip()
    return proc, base_url


async def stop_fake(proc: asyncio.subprocess.Process) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    await proc.wait()


async def raw_turns(codex: str, env: dict[str, str], cwd: str, turns: int) -> tuple[float, list[float]]:
    t0 = time.perf_counter()
    raw = await RawAppServer.start(codex, env, cwd)
    rid = await raw.request("initialize", {"clientInfo": {"name": "bench", "version": "0"}})
    await raw.until(lambda m: m.get("id") == rid)
    await raw.send({"method": "initialized"})
    rid = await raw.request("thread/start", {"cwd": cwd})
    thread_id = (await raw.until(lambda m: m.get("id") == rid))["result"]["thread"]["id"]
    timings: list[float] = []
    cold = 0.0
    for i in range(turns + 1):
        start = time.perf_counter()
        await raw.request("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": f"turn {i}"}]})
        await raw.until(lambda m: m.get("method") == "turn/completed")
        if i == 0:
            cold = time.perf_counter() - t0
        else:
            timings.append(time.perf_counter() - start)
    await raw.close()
    return cold, timings


async def driver_thread_turns(driver: Driver, cwd: str, turns: int) -> tuple[float, list[float]]:
    timings: list[float] = []
    async with Agent(driver, workspace=cwd) as agent:
        thread = agent.thread("bench")
        start = time.perf_counter()
        await thread.send("turn 0").result()
        cold = time.perf_counter() - start
        for i in range(turns):
            start = time.perf_counter()
            await thread.send(f"turn {i + 1}").result()
            timings.append(time.perf_counter() - start)
    return cold, timings


async def driver_fresh_runs(driver: Driver, cwd: str, runs: int, *, thread: bool) -> list[float]:
    timings: list[float] = []
    async with Agent(driver, workspace=cwd) as agent:
        for i in range(runs):
            start = time.perf_counter()
            if thread:
                await agent.thread("fresh").send(f"run {i}", spawn=True).result()
            else:
                await agent.send(f"run {i}").result()
            timings.append(time.perf_counter() - start)
    return timings


def fmt(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"median {statistics.median(values) * 1000:7.1f} ms   p90 {p90 * 1000:7.1f} ms   (n={len(values)})"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=20, help="warm turns per series")
    parser.add_argument("--fresh", type=int, default=8, help="runs on fresh processes")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of raw and driver series")
    args = parser.parse_args()
    codex = find_cli("codex")
    if codex is None:
        raise SystemExit("the Codex CLI is not installed; run scripts/setup.sh")
    fake, base_url = await start_fake()
    with tempfile.TemporaryDirectory(prefix="codex-bench-") as tmp:
        try:
            home = write_codex_home(
                Path(tmp) / "codex-home",
                provider_settings(base_url=base_url, env_key=KEY_ENV, request_max_retries=0),
            )
            cwd = str(Path(tmp))
            env = {**os.environ, "CODEX_HOME": str(home), "HOME": tmp, KEY_ENV: "sk-bench"}
            driver = Driver(
                Config(command=[codex], codex_home=str(home), env={"HOME": tmp}, secret_env={KEY_ENV: "sk-bench"})
            )
            raw_warm: list[float] = []
            lib_warm: list[float] = []
            raw_cold: list[float] = []
            lib_cold: list[float] = []
            for _ in range(args.rounds):  # interleaved, so drift on a busy machine hits both sides alike
                cold, warm = await raw_turns(codex, env, cwd, args.turns)
                raw_cold.append(cold)
                raw_warm += warm
                cold, warm = await driver_thread_turns(driver, cwd, args.turns)
                lib_cold.append(cold)
                lib_warm += warm
            fresh_direct = await driver_fresh_runs(driver, cwd, args.fresh, thread=False)
            fresh_thread = await driver_fresh_runs(driver, cwd, args.fresh, thread=True)
        finally:
            await stop_fake(fake)
    print(f"Codex {os.path.basename(codex)} app-server against the fake OpenAI server, {os.cpu_count()} CPUs")
    print(f"raw app-server, warm turn          {fmt(raw_warm)}")
    print(f"driver, Thread (persistent) turn   {fmt(lib_warm)}")
    print(f"raw app-server, spawn to 1st turn  {fmt(raw_cold)}")
    print(f"driver, Thread first run (cold)    {fmt(lib_cold)}")
    print(f"driver, direct send (fresh)        {fmt(fresh_direct)}")
    print(f"driver, Thread spawn=True (fresh)  {fmt(fresh_thread)}")
    ratio = statistics.median(lib_warm) / statistics.median(raw_warm)
    print(f"persistent warm turn / raw warm turn = {ratio:.2f}x (target <= 1.10x)")


if __name__ == "__main__":
    asyncio.run(main())
