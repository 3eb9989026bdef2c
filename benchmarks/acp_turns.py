"""ACP turn latency: the ACP driver beside a bare client of the Agent Client Protocol SDK, on the same agent.

The agent is codex-acp (``@zed-industries/codex-acp``, installed by ``scripts/setup.sh``) against the project's fake
OpenAI Responses server on 127.0.0.1, run in its own process so it does not compete with the measured client for the
GIL. Run from the repository root::

    .venv/bin/python benchmarks/acp_turns.py [--turns 20] [--rounds 3]

Each round times, in alternation so a slow spell of the machine hits both sides:

* ``driver``: a Thread of ``Agent(acp.Driver(acp.preset("codex")))``: the first run (spawn, ``initialize``,
  ``session/new``, the prompt), then warm turns on the parked process;
* ``sdk``: the SDK's own ``spawn_agent_process`` with a client that only collects the text: ``initialize``,
  ``session/new``, then the same prompts.

Target: driver warm turn <= 1.05x the bare SDK client's.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import acp

from adaptor_nb import Agent
from adaptor_nb.drivers import acp as acp_driver
from adaptor_nb.drivers.codex._home import provider_settings, write_codex_home

ROOT = Path(__file__).resolve().parent.parent
KEY_ENV = "FAKE_OPENAI_API_KEY"
SERVE_FAKE = """
import sys
from adaptor_nb.testing import FakeOpenAIServer
with FakeOpenAIServer() as server:
    print(server.base_url, flush=True)
    sys.stdin.read()
"""


def codex_acp() -> str:
    found = ROOT / ".cache" / "npm" / "node_modules" / ".bin" / "codex-acp"
    if not found.is_file():
        sys.exit("codex-acp is missing: run scripts/setup.sh")
    return str(found)


async def start_fake() -> tuple[asyncio.subprocess.Process, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", SERVE_FAKE, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None
    return proc, (await proc.stdout.readline()).decode().strip()


class TextClient:
    """The smallest ACP client: collects message text, answers nothing else."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if getattr(update, "session_update", "") == "agent_message_chunk":
            self.parts.append(getattr(update.content, "text", ""))

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        return acp.schema.RequestPermissionResponse(outcome=acp.schema.DeniedOutcome(outcome="cancelled"))

    def on_connect(self, conn: Any) -> None:
        return None


async def sdk_turns(argv: list[str], env: dict[str, str], cwd: str, turns: int) -> tuple[float, list[float]]:
    client = TextClient()
    t0 = time.perf_counter()
    timings: list[float] = []
    first = 0.0
    async with acp.spawn_agent_process(client, argv[0], *argv[1:], env=env, cwd=cwd) as (conn, _proc):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=cwd, mcp_servers=[])
        for i in range(turns + 1):
            start = time.perf_counter()
            client.parts.clear()
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(f"Turn {i}. [[say ok {i}]]")])
            assert "".join(client.parts) == f"ok {i}", client.parts
            if i == 0:
                first = time.perf_counter() - t0
            else:
                timings.append(time.perf_counter() - start)
    return first, timings


async def driver_turns(driver: acp_driver.Driver, cwd: str, turns: int) -> tuple[float, list[float]]:
    timings: list[float] = []
    first = 0.0
    async with Agent(driver, workspace=cwd) as agent:
        thread = agent.thread("bench")
        for i in range(turns + 1):
            start = time.perf_counter()
            result = await thread.send(f"Turn {i}. [[say ok {i}]]").result()
            assert result.text == f"ok {i}", result.text
            if i == 0:
                first = time.perf_counter() - start
            else:
                timings.append(time.perf_counter() - start)
    return first, timings


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    binary = codex_acp()
    fake, base_url = await start_fake()
    tmp = Path(tempfile.mkdtemp(prefix="acp-bench-"))
    settings = provider_settings(
        base_url=base_url, model="gpt-5.5", env_key=KEY_ENV, request_max_retries=0, stream_max_retries=0
    )
    home = write_codex_home(tmp / "codex-home", settings)
    (tmp / "home").mkdir()
    env = {"HOME": str(tmp / "home"), "CODEX_HOME": str(home), "PATH": "/usr/bin:/bin", KEY_ENV: "sk-bench"}
    driver = acp_driver.Driver(
        acp_driver.preset("codex", command=[binary], env={k: v for k, v in env.items() if k != KEY_ENV},
                          secret_env={KEY_ENV: "sk-bench"})
    )  # fmt: skip
    series: dict[str, list[float]] = {"driver": [], "sdk": []}
    firsts: dict[str, list[float]] = {"driver": [], "sdk": []}
    try:
        for _ in range(args.rounds):
            for name in ("driver", "sdk"):
                cwd = tempfile.mkdtemp(dir=tmp)
                if name == "driver":
                    first, warm = await driver_turns(driver, cwd, args.turns)
                else:
                    first, warm = await sdk_turns([binary], env, cwd, args.turns)
                firsts[name].append(first)
                series[name] += warm
    finally:
        assert fake.stdin is not None
        fake.stdin.close()
        await fake.wait()
    med = {k: statistics.median(v) for k, v in series.items()}
    first_med = {k: statistics.median(v) for k, v in firsts.items()}
    print(f"codex-acp, {args.rounds} rounds x {args.turns} warm turns, medians")
    print(f"warm turn   driver {med['driver'] * 1e3:7.1f} ms   sdk {med['sdk'] * 1e3:7.1f} ms   "
          f"ratio {med['driver'] / med['sdk']:.3f}x (target <= 1.05x)")  # fmt: skip
    print(f"first turn  driver {first_med['driver'] * 1e3:7.1f} ms   sdk {first_med['sdk'] * 1e3:7.1f} ms   "
          f"ratio {first_med['driver'] / first_med['sdk']:.3f}x")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
