"""AG-UI bridge throughput and memory: a 100,000-delta run through ``POST /agui`` to a client on loopback, beside the
same run consumed directly from ``Stream.events()`` in the same process and session.

Run: ``.venv/bin/python benchmarks/agui_bridge.py [--count 100000] [--repeat 5] [--memory-count 20000] [--profile]``

Throughput: the benchmark's flood driver (``event_pipeline.FloodDriver``) emits ``count`` one-character TextDelta
events in one turn. *Direct*: one consumer reads ``stream.events()`` until Done. *Bridge*: the endpoint
(``agui.app`` + ``agui.serve``, uvicorn on this process's loop) streams the run as Server-Sent Events to a client in
another process, a raw socket reader that only collects bytes; after the run it parses the stream and checks that
every character arrived. Per event: the server process's CPU time per TextDelta (the loop is single-threaded, so
other load on the machine does not count; the client's own parsing is in its own process), with wall time beside.
Rounds alternate direct and bridge; figures are medians.

Memory: ``tracemalloc`` bytes held per buffered event. *Direct*: a consumer has attached to ``stream.events()`` and
reads nothing while the run completes, so the Stream's buffer holds every event. *Bridge*: an AG-UI run is attached
but its client reads nothing, so the bridge's per-client buffer holds every event.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import statistics
import subprocess
import sys
import textwrap
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from event_pipeline import FloodDriver

import adaptor_nb
from adaptor_nb import Agent, Done, TextDelta
from adaptor_nb.bridges import agui

TARGET_RATIO = 1.5

CLIENT = textwrap.dedent(
    """
    import json, socket, sys, time
    host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    body = json.dumps({"threadId": "bench", "runId": "r", "messages": [
        {"id": "u" + str(time.time_ns()), "role": "user", "content": "flood"}]}).encode()
    head = (f"POST /agui HTTP/1.1\\r\\nHost: {host}:{port}\\r\\nContent-Type: application/json\\r\\n"
            f"Accept: text/event-stream\\r\\nContent-Length: {len(body)}\\r\\nConnection: close\\r\\n\\r\\n").encode()
    sys.stdin.readline()  # go
    t0 = time.perf_counter()
    sock = socket.create_connection((host, port))
    sock.sendall(head + body)
    chunks = []
    while True:
        data = sock.recv(1 << 20)
        if not data:
            break
        chunks.append(data)
    seconds = time.perf_counter() - t0
    raw = b"".join(chunks)
    payload = raw.split(b"\\r\\n\\r\\n", 1)[1].decode()
    chars = events = 0
    last = ""
    for line in payload.splitlines():
        if line.startswith("data: "):
            ev = json.loads(line[6:])
            events += 1
            last = ev["type"]
            if ev["type"] == "TEXT_MESSAGE_CONTENT":
                chars += len(ev["delta"])
    print(json.dumps({"seconds": seconds, "chars": chars, "events": events, "last": last, "bytes": len(raw)}))
    """
)


@dataclass
class Round:
    seconds: float
    cpu: float
    received: int
    wire_events: int = 0


async def direct_round(count: int) -> Round:
    agent = Agent(FloodDriver(count), event_buffer=count + 64)
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        stream = agent.send("flood")
        received = 0
        async for ev in stream.events():
            if type(ev) is TextDelta:
                received += 1
            elif isinstance(ev, Done):
                break
        await stream.result()
        return Round(time.perf_counter() - t0, time.process_time() - c0, received)
    finally:
        await agent.close()


async def bridge_round(count: int) -> Round:
    agent = Agent(FloodDriver(count), event_buffer=count + 64)
    srv = await agui.serve(agui.app(agent, token=False))
    client = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CLIENT,
        srv.host,
        str(srv.port),
        str(count),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert client.stdin is not None
        t0, c0 = time.perf_counter(), time.process_time()
        client.stdin.write(b"go\n")
        await client.stdin.drain()
        out, _ = await client.communicate()
        cpu = time.process_time() - c0
        seconds = time.perf_counter() - t0
    finally:
        await srv.stop()
        await agent.close()
    report = json.loads(out)
    assert report["last"] == "RUN_FINISHED", report
    return Round(seconds, cpu, report["chars"], report["events"])


def rounds(count: int, repeat: int) -> tuple[list[Round], list[Round]]:
    direct: list[Round] = []
    bridge: list[Round] = []
    for _ in range(repeat):
        gc.collect()
        direct.append(asyncio.run(direct_round(count)))
        gc.collect()
        bridge.append(asyncio.run(bridge_round(count)))
    return direct, bridge


def row(label: str, runs: list[Round], count: int) -> float:
    cpu = statistics.median(r.cpu for r in runs)
    wall = statistics.median(r.seconds for r in runs)
    short = min(r.received for r in runs)
    wire = statistics.median(r.wire_events for r in runs) if runs[0].wire_events else 0
    tail = f"  received only {short}" if short != count else ""
    tail += f"  ({wire:,.0f} AG-UI events on the wire)" if wire else ""
    print(
        f"  {label:<44} {count / cpu:>9,.0f} ev/s {cpu / count * 1e6:>7.3f} µs/ev CPU"
        f"  ({wall / count * 1e6:.3f} µs/ev wall, {count / wall:,.0f} ev/s){tail}"
    )
    return cpu / count * 1e6


async def direct_memory(count: int) -> float:
    agent = Agent(FloodDriver(count), event_buffer=count + 64)
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        stream = agent.send("flood")
        events = stream.events()
        await events.__anext__()  # a consumer is attached (so the Stream keeps its events) and reads nothing more
        await stream.done_event()  # the whole run, buffered for it
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
        read = 1 + sum([1 async for _ in events])
        assert read >= count, f"the Stream kept only {read} of {count} events"
        return held / count
    finally:
        await agent.close()


async def bridge_memory(count: int) -> float:
    from ag_ui.core import RunAgentInput

    agent = Agent(FloodDriver(count), event_buffer=count + 64)
    app = agui.app(agent, token=False)
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        run_input = RunAgentInput(
            thread_id="mem", run_id="r", messages=[{"id": "u1", "role": "user", "content": "flood"}]
        )
        frames = app.bridge.run(run_input)
        await frames.__anext__()  # the AG-UI run is attached; its client reads nothing more
        live = app.bridge.lives[app.bridge.key_of("mem")]
        await live.wait()  # the whole run, buffered for the client
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
        async for _ in frames:
            pass
        return held / count
    finally:
        await app.aclose()
        await agent.close()


def profile(count: int, top: int) -> None:
    prof = cProfile.Profile()
    prof.enable()
    asyncio.run(bridge_round(count))
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    print("\ncProfile of one bridge round (server process), sorted by own time:")
    print("\n".join(out.getvalue().splitlines()[: top + 12]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--memory-count", type=int, default=20_000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    n = args.count
    print(f"AG-UI bridge: {n:,} TextDelta events, median of {args.repeat} rounds, alternating")
    print(f"  Python {platform.python_version()} on {platform.machine()}, {platform.system()}; {os.cpu_count()} CPUs")
    print(f"  adaptor_nb from {Path(adaptor_nb.__file__).parent}; load average {os.getloadavg()[0]:.2f}")
    direct, bridge = rounds(n, args.repeat)
    base = row("direct: Stream.events()", direct, n)
    per = row("bridge: POST /agui → SSE → loopback client", bridge, n)
    ratio = per / base
    verdict = "met" if ratio <= TARGET_RATIO else "MISSED"
    print(f"  bridge / direct: {ratio:.2f}× CPU per event (target ≤ {TARGET_RATIO:g}×: {verdict})")
    tracemalloc.start()
    m = args.memory_count
    held_direct = asyncio.run(direct_memory(m))
    held_bridge = asyncio.run(bridge_memory(m))
    tracemalloc.stop()
    verdict = "met" if held_bridge <= held_direct else "MISSED"
    print(
        f"  memory per buffered event ({m:,} events): direct {held_direct:,.0f} B, bridge {held_bridge:,.0f} B "
        f"(target: no higher than direct: {verdict})"
    )
    if args.profile:
        profile(n, args.top)
    subprocess.run([sys.executable, "-c", "pass"], check=True)  # nothing left running: a clean exit below


if __name__ == "__main__":
    main()
