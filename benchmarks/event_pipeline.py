"""Event pipeline throughput: TextDelta events from a driver through Stream.events(), beside a bare asyncio.Queue.

Run: ``.venv/bin/python benchmarks/event_pipeline.py [--count 200000] [--repeat 5] [--profile]``

A minimal driver emits ``count`` TextDelta events as fast as it can through ``ctx.emit``; one consumer reads
``stream.events()`` until Done. Two Stream modes are measured: the default non-blocking broker with a buffer large
enough that nothing drops, and ``blocking_events=True`` with the default 1024-event buffer. Each is compared with
the same count through a bare ``asyncio.Queue`` (a producer task and a consumer) built the same way: unbounded for
the first, ``maxsize=1024`` for the second. Rounds alternate baseline and Stream; figures are medians of the
process's CPU time per round (the loop is single-threaded, so other load on the machine does not count), with the wall
time beside.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import os
import platform
import pstats
import statistics
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import adaptor_nb
from adaptor_nb import Agent, Done, Dropped, TextDelta, Usage
from adaptor_nb.driver import Descriptor, DriverOutcome, Invocation, RunContext

TARGET_RATIO = 3.0
DEFAULT_BUFFER = 1024


class FloodDriver:
    """Emits ``count`` TextDelta events in one turn as fast as ``ctx.emit`` accepts them."""

    def __init__(self, count: int) -> None:
        self.count = count

    @property
    def name(self) -> str:
        return "flood"

    def descriptor(self) -> Descriptor:
        return Descriptor(name="flood", provider="benchmark")

    def validate_config(self) -> None:
        return None

    def config_fingerprint(self) -> str:
        return "flood"

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        emit = ctx.emit
        for _ in range(self.count):
            await emit(TextDelta(text="x", message_id="m"))
        await ctx.turn_end(usage=Usage(input_tokens=1, output_tokens=self.count), text="")
        return DriverOutcome(text="", provider="benchmark")


@dataclass
class Round:
    seconds: float  # wall time
    cpu: float  # CPU time of this process (the loop is single-threaded, so this ignores time spent descheduled)
    received: int
    dropped: int


async def stream_round(count: int, *, blocking: bool) -> Round:
    buffer = DEFAULT_BUFFER if blocking else count + 64
    agent = Agent(FloodDriver(count), event_buffer=buffer, blocking_events=blocking)
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        stream = agent.send("flood")
        received = dropped = 0
        async for ev in stream.events():
            if type(ev) is TextDelta:
                received += 1
            elif isinstance(ev, Dropped):
                dropped += ev.count
            elif isinstance(ev, Done):
                break
        await stream.result()
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        await agent.close()
    return Round(seconds, cpu, received, dropped)


async def queue_round(count: int, *, bounded: bool) -> Round:
    queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=DEFAULT_BUFFER if bounded else 0)
    end = object()

    async def producer() -> None:
        put = queue.put
        for _ in range(count):
            await put(TextDelta(text="x", message_id="m"))
        await put(end)

    t0, c0 = time.perf_counter(), time.process_time()
    task = asyncio.get_running_loop().create_task(producer())
    received = 0
    get = queue.get
    while True:
        item = await get()
        if item is end:
            break
        received += 1
    await task
    return Round(time.perf_counter() - t0, time.process_time() - c0, received, 0)


def measure_pair(
    base: Callable[[], Coroutine[Any, Any, Round]], subject: Callable[[], Coroutine[Any, Any, Round]], repeat: int
) -> tuple[list[Round], list[Round]]:
    """Alternate baseline and subject rounds so that drift in machine load hits both alike."""
    bases: list[Round] = []
    subjects: list[Round] = []
    for _ in range(repeat):
        for make, out in ((base, bases), (subject, subjects)):
            gc.collect()
            out.append(asyncio.run(make()))
    return bases, subjects


def line(label: str, rounds: list[Round], count: int) -> float:
    """Print one row and return the median CPU µs per event."""
    wall = statistics.median(r.seconds for r in rounds)
    cpu = statistics.median(r.cpu for r in rounds)
    drops = max(r.dropped for r in rounds)
    short = min(r.received for r in rounds)
    tail = f"  dropped {drops}" if drops else ""
    tail += f"  received only {short}" if short != count else ""
    print(
        f"  {label:<58} {count / cpu:>10,.0f} ev/s {cpu / count * 1e6:>7.3f} µs/ev CPU"
        f"  ({wall / count * 1e6:.3f} µs/ev wall){tail}"
    )
    return cpu / count * 1e6


def profile(count: int, blocking: bool, top: int) -> None:
    prof = cProfile.Profile()
    prof.enable()
    asyncio.run(stream_round(count, blocking=blocking))
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    print(f"\ncProfile of one Stream round (blocking={blocking}), sorted by own time:")
    print("\n".join(out.getvalue().splitlines()[: top + 12]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one Stream round per mode")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    n = args.count
    print(f"event pipeline: {n:,} TextDelta events, median of {args.repeat} rounds")
    print(f"  Python {platform.python_version()} on {platform.machine()}, {platform.system()}; {os.cpu_count()} CPUs")
    print(f"  adaptor_nb from {Path(adaptor_nb.__file__).parent}")
    results: list[tuple[str, float, float, int]] = []
    bounded_base = 0.0
    for blocking in (False, True):
        if blocking:
            title = f"blocking_events=True, buffer {DEFAULT_BUFFER}"
            base_title = f"bare asyncio.Queue(maxsize={DEFAULT_BUFFER})"
        else:
            title = f"non-blocking, buffer {n + 64:,}"
            base_title = "bare asyncio.Queue() (unbounded)"
        bases, rounds = measure_pair(
            partial(queue_round, n, bounded=blocking),
            partial(stream_round, n, blocking=blocking),
            args.repeat,
        )
        base = line(base_title, bases, n)
        per = line(f"Stream.events(), {title}", rounds, n)
        if blocking:
            bounded_base = base
        results.append((title, per, base, max(r.dropped for r in rounds)))
    print()
    for title, per, base, drops in results:
        ratio = per / base
        verdict = "met" if ratio <= TARGET_RATIO else "MISSED"
        print(
            f"  {title:<34} {ratio:5.2f}× its bare queue per event (target ≤ {TARGET_RATIO:g}×: {verdict}); "
            f"{per / bounded_base:5.2f}× the bounded queue; " + (f"{drops} dropped" if drops else "nothing dropped")
        )
    if args.profile:
        for blocking in (False, True):
            profile(n, blocking, args.top)


if __name__ == "__main__":
    main()
