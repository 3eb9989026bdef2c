"""Host-tool round trip on the real Claude and Codex CLIs: the model asks for a tool, how long until the tool's
result is in the next model request, for the Agent's hosted Python function beside the same function served by a
minimal stdio MCP server process, in the same run.

Both subjects run on a warm Thread (the CLI process stays up between rounds), against the project's fake model
servers on 127.0.0.1, alternating rounds; the figure is the median time between the model request that asks for the
tool and the one that carries its result (the fake server clocks both on arrival). Run from the repository root::

    .venv/bin/python benchmarks/host_tools.py [--rounds 9] [--driver claude|codex|both] [--server process|thread]

For Claude the fake server runs in a process of its own by default, as a real API is never in the kernel's
process; ``--server thread`` runs it in the benchmark's process (as the figures before that option were made).
Claude reaches the hosted tool over its SDK MCP control channel (no port), Codex over the loopback streamable-HTTP
server. Target: hosted ≤ 1.0× the stdio server.
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
from typing import Any

from adaptor_nb import Agent, mcp
from adaptor_nb.testing import find_cli

ROOT = Path(__file__).resolve().parent.parent
STDIO_ECHO = str(ROOT / "tests" / "fixtures" / "mcp_echo_server.py")
QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_MAX_RETRIES": "0",
}


def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


class Clock:
    """Arrival times of the two model requests of a round: the one that gets the tool call, the one with the result."""

    def __init__(self) -> None:
        self.asked = 0.0
        self.answered = 0.0

    def trip(self) -> float:
        return self.answered - self.asked


def _tree_cpu(root: int) -> float:
    """Seconds on a CPU so far of every thread of ``root`` and of its descendants (from /proc: Linux only)."""
    total = 0
    pids = [root]
    while pids:
        pid = pids.pop()
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/schedstat") as fh:
                    total += int(fh.read().split()[0])
                with open(f"/proc/{pid}/task/{task}/children") as fh:
                    pids.extend(int(c) for c in fh.read().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total / 1e9


def _children() -> set[int]:
    with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children") as fh:
        return {int(c) for c in fh.read().split()}


def _last_user_has_tool_result(messages: list[dict[str, Any]]) -> bool:
    last = messages[-1] if messages else {}
    content = last.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


# The fake Anthropic server in a process of its own, as the real API is never in the kernel's process: in the
# benchmark's process its thread competes for the interpreter with the driver's work. It prints when each model
# request arrived (time.perf_counter is the system's monotonic clock, the same in both processes).
SERVER_PROCESS = """
import sys, time
from adaptor_nb.testing._anthropic import FakeAnthropicServer, Reply

NAMES = sys.argv[1:]

def respond(req):
    last = req.messages[-1] if req.messages else {}
    content = last.get("content")
    if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        print("answered", time.perf_counter(), flush=True)
        return Reply.text("done")
    print("asked", time.perf_counter(), flush=True)
    return Reply.tool(next(n for n in NAMES if n in req.tool_names), {"text": "ping"})

with FakeAnthropicServer() as fake:
    fake.responder = respond
    print("url", fake.url, flush=True)
    sys.stdin.read()
"""


class ServerProcess:
    """The fake Anthropic server run by ``SERVER_PROCESS``; ``trip()`` reads the clock lines of one round."""

    def __init__(self, proc: asyncio.subprocess.Process, url: str) -> None:
        self.proc = proc
        self.url = url

    @classmethod
    async def start(cls, names: list[str]) -> ServerProcess:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", SERVER_PROCESS, *names, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        assert proc.stdout is not None
        first = (await proc.stdout.readline()).decode().split()
        if first[:1] != ["url"]:
            raise SystemExit("the fake model server process did not start")
        return cls(proc, first[1])

    async def trip(self) -> float:
        """The time from the last request that asked for the tool to the one that carried its result."""
        assert self.proc.stdout is not None
        asked = 0.0
        while True:
            kind, stamp = (await self.proc.stdout.readline()).decode().split()
            if kind == "asked":
                asked = float(stamp)
            else:
                return float(stamp) - asked

    async def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        await self.proc.wait()


async def claude_rounds(rounds: int, server: str = "process") -> dict[str, list[float]]:
    from adaptor_nb.drivers import claude
    from adaptor_nb.testing._anthropic import FakeAnthropicServer, RecordedRequest, Reply

    cli = find_cli("claude")
    clock = Clock()
    tool_name = {"value": ""}

    def respond(req: RecordedRequest) -> Reply:
        if _last_user_has_tool_result(req.messages):
            clock.answered = time.perf_counter()
            return Reply.text("done")
        clock.asked = time.perf_counter()
        return Reply.tool(tool_name["value"], {"text": "ping"})

    out: dict[str, list[float]] = {"hosted": [], "stdio": []}
    for label in ("hosted", "stdio"):
        out[f"{label} cli cpu"], out[f"{label} own cpu"] = [], []
    remote = await ServerProcess.start(["mcp__pytools__echo", "mcp__echo__echo"]) if server == "process" else None
    with tempfile.TemporaryDirectory() as home, FakeAnthropicServer() as fake:
        fake.responder = respond
        url = remote.url if remote is not None else fake.url

        def config(**fields: Any) -> claude.Config:
            return claude.Config(
                command=[cli],
                cwd=home,
                env={"HOME": home, "ANTHROPIC_BASE_URL": url, **QUIET},
                secret_env={"ANTHROPIC_API_KEY": "sk-ant-bench"},
                bare=True,
                **fields,
            )

        hosted = Agent(claude.Driver(config()), tools=[echo], workspace=home)
        stdio = Agent(
            claude.Driver(config(allowed_tools=["mcp__echo__echo"])),
            mcp=[mcp.Stdio("echo", sys.executable, args=[STDIO_ECHO])],
            workspace=home,
        )
        subjects = {"hosted": (hosted, "mcp__pytools__echo"), "stdio": (stdio, "mcp__echo__echo")}
        clis: dict[str, set[int]] = {}
        try:
            for i in range(rounds + 1):  # the first round of each warms its process up and is not counted
                for label, (agent, name) in subjects.items():
                    tool_name["value"] = name
                    before = _children()
                    cli_cpu = sum(_tree_cpu(pid) for pid in clis.get(label, ()))
                    own_cpu = time.process_time()
                    await agent.thread("bench").send(f"round {i}")
                    trip = await remote.trip() if remote is not None else clock.trip()
                    if i:
                        out[label].append(trip)
                        out[f"{label} own cpu"].append(time.process_time() - own_cpu)
                        out[f"{label} cli cpu"].append(sum(_tree_cpu(pid) for pid in clis[label]) - cli_cpu)
                    else:
                        clis[label] = _children() - before  # the CLI this Thread keeps (and, for stdio, its server)
            if hosted._engine.tool_host.listening:
                raise SystemExit("the Claude Agent started the loopback HTTP server: the SDK path was not measured")
        finally:
            await hosted.close()
            await stdio.close()
            if remote is not None:
                await remote.close()
    return out


async def codex_rounds(rounds: int) -> dict[str, list[float]]:
    from adaptor_nb.drivers.codex import Config, Driver
    from adaptor_nb.drivers.codex._home import provider_settings, write_codex_home
    from adaptor_nb.testing import FakeOpenAIServer
    from adaptor_nb.testing._openai import RecordedRequest, Reply

    cli = find_cli("codex")
    clock = Clock()
    namespace = {"value": ""}

    def respond(req: RecordedRequest) -> Reply:
        items = req.input_items
        if items and items[-1].get("type") == "function_call_output":
            clock.answered = time.perf_counter()
            return Reply.text("done")
        clock.asked = time.perf_counter()
        return Reply.function_call("echo", {"text": "ping"}, namespace=namespace["value"])

    out: dict[str, list[float]] = {"hosted": [], "stdio": []}
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer() as fake:
        fake.responder = respond
        settings = provider_settings(base_url=fake.base_url, env_key="FAKE_OPENAI_API_KEY", request_max_retries=0)
        home = write_codex_home(Path(tmp) / "codex-home", settings)

        def driver() -> Driver:
            return Driver(
                Config(
                    command=[cli],
                    codex_home=str(home),
                    env={"HOME": tmp},
                    secret_env={"FAKE_OPENAI_API_KEY": "sk-bench"},
                )
            )

        from adaptor_nb import ApprovalMode, ApprovalPolicy, Policy

        auto = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_APPROVE))
        hosted = Agent(driver(), tools=[echo], workspace=tmp, policy=auto)
        stdio = Agent(driver(), mcp=[mcp.Stdio("echo", sys.executable, args=[STDIO_ECHO])], workspace=tmp, policy=auto)
        subjects = {"hosted": (hosted, "mcp__pytools"), "stdio": (stdio, "mcp__echo")}
        try:
            for i in range(rounds + 1):
                for label, (agent, ns) in subjects.items():
                    namespace["value"] = ns
                    await agent.thread("bench").send(f"round {i}")
                    if i:
                        out[label].append(clock.trip())
        finally:
            await hosted.close()
            await stdio.close()
    return out


def report(
    name: str, transport: str, data: dict[str, list[float]], own: str = "this process, fake server included"
) -> None:
    hosted = statistics.median(data["hosted"])
    stdio = statistics.median(data["stdio"])
    ratio = hosted / stdio
    print(f"{name}: round trip, median of {len(data['hosted'])} warm rounds")
    print(f"  hosted Python tool ({transport}): {hosted * 1000:8.1f} ms")
    print(f"  stdio MCP server process (baseline): {stdio * 1000:8.1f} ms")
    gap = statistics.median(h - s for h, s in zip(data["hosted"], data["stdio"], strict=True))
    print(f"  ratio {ratio:.2f}x (target <= 1.0x): {'met' if ratio <= 1.0 else 'NOT met'}")
    print(f"  median per-round difference {gap * 1000:+.1f} ms; load average {os.getloadavg()[0]:.2f}")
    for part, what in (("cli", "the CLI and its children"), ("own", own)):
        if data.get(f"hosted {part} cpu"):
            h_cpu, s_cpu = statistics.median(data[f"hosted {part} cpu"]), statistics.median(data[f"stdio {part} cpu"])
            print(
                f"  CPU per send, {what}: hosted {h_cpu * 1000:.1f} ms, stdio {s_cpu * 1000:.1f} ms "
                f"({h_cpu / s_cpu:.2f}x)"
            )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--driver", choices=("claude", "codex", "both"), default="both")
    parser.add_argument(
        "--server",
        choices=("process", "thread"),
        default="process",
        help="Claude: the fake model server in a process of its own (default, as a real API) or in this process",
    )
    args = parser.parse_args()
    if args.driver in ("claude", "both"):
        where = "fake server in its own process" if args.server == "process" else "fake server in this process"
        own = "this process" if args.server == "process" else "this process, fake server included"
        report(f"claude ({where})", "SDK MCP control channel", await claude_rounds(args.rounds, args.server), own)
    if args.driver in ("codex", "both"):
        report("codex", "loopback HTTP MCP", await codex_rounds(args.rounds))


if __name__ == "__main__":
    asyncio.run(main())
