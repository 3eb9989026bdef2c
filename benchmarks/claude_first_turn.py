"""Claude Code's first turn: this library beside claude-agent-sdk-python, on the same CLI and fake model server.

Run from the repository root::

    .venv/bin/python benchmarks/claude_first_turn.py [--runs 8]

A first turn is everything from asking to the result: the CLI's start, its first model request (answered by the
project's fake Anthropic server on 127.0.0.1) and the result line. Each round times, in alternation so a slow spell
of the machine hits every side:

* ``adaptor_nb``: ``await agent.send(prompt).result()`` on the Claude driver (a direct send starts a fresh process);
* ``claude-agent-sdk``: ``query(prompt, options)`` until its ResultMessage, in the SDK's own virtual environment
  (created once under ``.cache/bench/``; the SDK is never a dependency of this project), timed inside that process so
  its imports are not counted;
* the raw CLI over stream-json with the driver's flags, and again without ``-p`` (the SDK's way of starting it).

Target (first-hour work): adaptor_nb's first turn <= 1.0x the SDK's.
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
import venv
from pathlib import Path
from typing import Any

from adaptor_nb import Agent
from adaptor_nb.drivers import claude
from adaptor_nb.testing import FakeAnthropicServer, find_cli

ROOT = Path(__file__).resolve().parent.parent
SDK_VENV = ROOT / ".cache" / "bench" / "claude-sdk"
SDK_PIN = "claude-agent-sdk==0.2.189"
QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}
DRIVER_FLAGS = [
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    "--replay-user-messages",
    "--permission-prompt-tool",
    "stdio",
    "--include-partial-messages",
]

# Run by the SDK's interpreter: one timed first turn, printed as JSON seconds.
SDK_CHILD = r"""
import asyncio, json, sys, time
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

cli, cwd, prompt, env = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])

async def main():
    options = ClaudeAgentOptions(cli_path=cli, cwd=cwd, env=env, include_partial_messages=True)
    t0 = time.perf_counter()
    text = None
    async for msg in query(prompt=prompt, options=options):
        if isinstance(msg, ResultMessage):
            text = msg.result
    print(json.dumps({"seconds": time.perf_counter() - t0, "text": text}))

asyncio.run(main())
"""


def sdk_python() -> Path:
    py = SDK_VENV / "bin" / "python"
    if not py.exists():
        print(f"creating {SDK_VENV} with {SDK_PIN} (once)", flush=True)
        venv.create(SDK_VENV, with_pip=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", SDK_PIN], check=True)
    return py


def sdk_turn(py: Path, cli: str, cwd: str, prompt: str, env: dict[str, str]) -> float:
    out = subprocess.run(
        [str(py), "-c", SDK_CHILD, cli, cwd, prompt, json.dumps(env)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    answer = json.loads(out.stdout.strip().splitlines()[-1])
    if not answer["text"]:
        raise RuntimeError(f"the SDK's turn gave no text: {out.stdout[-500:]} {out.stderr[-500:]}")
    return float(answer["seconds"])


async def raw_turn(argv: list[str], env: dict[str, str], cwd: str, prompt: str) -> float:
    t0 = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=-1, stdout=-1, stderr=asyncio.subprocess.DEVNULL, env=env, cwd=cwd, limit=1 << 26
    )
    assert proc.stdin is not None and proc.stdout is not None
    line = {"type": "user", "message": {"role": "user", "content": prompt}, "parent_tool_use_id": None}
    proc.stdin.write(json.dumps(line).encode() + b"\n")
    await proc.stdin.drain()
    msg: dict[str, Any] = {}
    while msg.get("type") != "result":
        raw = await proc.stdout.readline()
        if not raw:
            raise RuntimeError("claude exited before its result")
        msg = json.loads(raw)
    elapsed = time.perf_counter() - t0
    proc.stdin.close()
    await proc.wait()
    return elapsed


async def bench(runs: int) -> None:
    cli = find_cli("claude")
    if cli is None:
        print("Claude Code not found (run scripts/setup.sh); skipped")
        return
    py = sdk_python()
    sides: dict[str, list[float]] = {"adaptor_nb": [], "claude-agent-sdk": [], "raw -p": [], "raw, no -p": []}
    with FakeAnthropicServer() as server, tempfile.TemporaryDirectory() as tmp:
        home, ws = os.path.join(tmp, "home"), os.path.join(tmp, "ws")
        os.mkdir(home)
        os.mkdir(ws)
        env = {"HOME": home, "ANTHROPIC_BASE_URL": server.url, **QUIET}
        full_env = {**os.environ, **env, "ANTHROPIC_API_KEY": "sk-bench"}
        cfg = claude.Config(command=[cli], env=env, secret_env={"ANTHROPIC_API_KEY": "sk-bench"})
        async with Agent(claude.Driver(cfg), workspace=ws) as agent:
            await agent.send("warm up [[say ok]]").result()  # imports and the CLI's first-ever start
            sdk_turn(py, cli, ws, "warm up [[say ok]]", {**env, "ANTHROPIC_API_KEY": "sk-bench"})
            for i in range(runs):
                t0 = time.perf_counter()
                await agent.send(f"first turn {i} [[say answer {i}]]").result()
                sides["adaptor_nb"].append(time.perf_counter() - t0)
                sides["claude-agent-sdk"].append(
                    sdk_turn(py, cli, ws, f"sdk turn {i} [[say answer {i}]]", {**env, "ANTHROPIC_API_KEY": "sk-bench"})
                )
                sides["raw -p"].append(await raw_turn([cli, "-p", *DRIVER_FLAGS], full_env, ws, f"raw {i} [[say a]]"))
                sides["raw, no -p"].append(await raw_turn([cli, *DRIVER_FLAGS], full_env, ws, f"raw {i} [[say a]]"))
    sdk = statistics.median(sides["claude-agent-sdk"])
    print(f"Claude Code first turn, fake model server, medians of {runs} alternating rounds")
    for name, values in sides.items():
        med = statistics.median(values)
        print(f"  {name:18} {med * 1000:7.1f} ms   {med / sdk:5.2f}x the SDK")
    ours = sides["adaptor_nb"]
    pairs = sorted(a / b for a, b in zip(ours, sides["claude-agent-sdk"], strict=True))
    print(f"  adaptor_nb / SDK, round by round: {', '.join(f'{r:.2f}' for r in pairs)}   (target <= 1.0x)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=8)
    asyncio.run(bench(p.parse_args().runs))


if __name__ == "__main__":
    sys.exit(main())
