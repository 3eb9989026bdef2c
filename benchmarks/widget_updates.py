"""Benchmark: widget traffic of one run view, and the cost of ``%load_ext adaptor_nb``.

1. A run of 20,000 text deltas spread over about 2 s goes through the real pipeline (Agent, Stream, broker) into a
   RunView whose comm is replaced by a counter. It prints the events, the comm messages and bytes the view sent, the
   messages per second, and checks that the widget's final text is exactly the Result's text. Beside it, the
   baseline: one comm message per delta (what an uncoalesced view would send), measured the same way.
2. ``ipython -c "%load_ext adaptor_nb"`` against the floor ``ipython -c pass`` (median of several runs each).

Run: ``.venv/bin/python benchmarks/widget_updates.py [--deltas N] [--seconds S] [--repeat R]``.
Targets: at most 30 messages per second per view; ``%load_ext`` at most 0.15 s above the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import comm

from adaptor_nb import Agent, TextDelta
from adaptor_nb.driver import Descriptor, DriverOutcome, Invocation, RunContext

RATE_TARGET = 30.0
LOAD_TARGET = 0.15


class CountingComm(comm.base_comm.BaseComm):  # type: ignore[misc]
    """Counts the messages and JSON bytes a widget sends instead of publishing them."""

    def __init__(self, **kwargs: Any) -> None:
        self.messages = 0
        self.bytes = 0
        super().__init__(**kwargs)

    def publish_msg(
        self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None, **keys: Any
    ) -> None:
        if msg_type == "comm_msg":
            self.messages += 1
            self.bytes += len(json.dumps(data, separators=(",", ":")).encode())


class PacedDriver:
    """Streams ``deltas`` text deltas in even batches over ``seconds`` (one message, one turn)."""

    name = "paced"

    def __init__(self, deltas: int, seconds: float) -> None:
        self.deltas = deltas
        self.seconds = seconds

    def descriptor(self) -> Descriptor:
        return Descriptor(name="paced", provider="benchmark")

    def validate_config(self) -> None:
        return None

    def config_fingerprint(self) -> str:
        return "paced"

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        batches = 200
        per_batch = self.deltas // batches
        parts: list[str] = []
        for b in range(batches):
            for i in range(per_batch):
                piece = f"t{b * per_batch + i} "
                parts.append(piece)
                await ctx.emit(TextDelta(text=piece, message_id="m1"))
            await asyncio.sleep(self.seconds / batches)
        text = "".join(parts)
        await ctx.turn_end(text=text)
        return DriverOutcome(text=text, provider="benchmark", model="paced")


async def widget_run(deltas: int, seconds: float) -> dict[str, Any]:
    """Stream one paced run into a RunView and into the one-message-per-delta baseline."""
    from adaptor_nb.notebook import RunView

    comm.create_comm = CountingComm
    agent = Agent(PacedDriver(deltas, seconds), blocking_events=True)
    view = RunView(driver="paced")
    baseline = RunView(driver="baseline")
    view_comm, baseline_comm = view.comm, baseline.comm
    opened = view_comm.messages, baseline_comm.messages
    opened_bytes = view_comm.bytes, baseline_comm.bytes
    stream = agent.send("go")
    started = time.perf_counter()
    events = 0
    text_events = 0
    done = None
    view.attach(stream)
    async for event in stream.events():
        events += 1
        view.apply(event)
        if isinstance(event, TextDelta):
            text_events += 1
            baseline.send({"delta": event.text})
        done = event
    await view.finish()
    elapsed = time.perf_counter() - started
    assert done is not None
    result = done.result  # type: ignore[attr-defined]
    await agent.close()
    shown = "".join(i["text"] for i in view.items if i["kind"] == "text")
    messages = view_comm.messages - opened[0]
    return {
        "deltas": text_events,
        "events": events,
        "seconds": elapsed,
        "messages": messages,
        "bytes": view_comm.bytes - opened_bytes[0],
        "rate": messages / elapsed,
        "exact": shown == result.text and view.live == {},
        "text_chars": len(result.text),
        "baseline_messages": baseline_comm.messages - opened[1],
        "baseline_bytes": baseline_comm.bytes - opened_bytes[1],
        "baseline_rate": (baseline_comm.messages - opened[1]) / elapsed,
    }


def _time(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, cwd=Path(__file__).resolve().parent)
    return time.perf_counter() - started


_IN_PROCESS = """
import time
from IPython.testing.globalipapp import start_ipython
shell = start_ipython()
t0 = time.perf_counter()
import adaptor_nb
t1 = time.perf_counter()
adaptor_nb.load_ipython_extension(shell)
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def load_ext_cost(repeat: int) -> dict[str, float]:
    """Wall time of ``ipython -c pass`` and ``ipython -c "%load_ext adaptor_nb"`` (interleaved), plus where it goes."""
    ipython = [sys.executable, "-m", "IPython", "--quick", "--no-banner", "-c"]
    floor: list[float] = []
    load: list[float] = []
    split: list[tuple[float, float]] = []
    _time([*ipython, "pass"])
    for _ in range(repeat):
        floor.append(_time([*ipython, "pass"]))
        load.append(_time([*ipython, "%load_ext adaptor_nb"]))
        out = subprocess.run([sys.executable, "-c", _IN_PROCESS], check=True, capture_output=True, text=True)
        core, ext = (float(x) for x in out.stdout.split())
        split.append((core, ext))
    return {
        "floor": statistics.median(floor),
        "load": statistics.median(load),
        "floor_min": min(floor),
        "load_min": min(load),
        "import_core": statistics.median(c for c, _ in split),
        "register": statistics.median(e for _, e in split),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args(argv)

    w = asyncio.run(widget_run(args.deltas, args.seconds))
    print("widget updates (one run view)")
    print(f"  text deltas        {w['deltas']:>10,}   ({w['events']:,} events in {w['seconds']:.2f} s)")
    print(f"  final text         {w['text_chars']:>10,} chars, widget text exact: {w['exact']}")
    print(f"  {'':18} {'coalesced view':>16} {'baseline (1/delta)':>20}")
    print(f"  {'comm messages':18} {w['messages']:>16,} {w['baseline_messages']:>20,}")
    print(f"  {'messages / s':18} {w['rate']:>16.1f} {w['baseline_rate']:>20.1f}")
    print(f"  {'bytes sent':18} {w['bytes']:>16,} {w['baseline_bytes']:>20,}")
    ok_rate = w["rate"] <= RATE_TARGET
    print(f"  target <= {RATE_TARGET:.0f} messages/s per view: {'met' if ok_rate else 'MISSED'}")

    c = load_ext_cost(args.repeat)
    extra = c["load"] - c["floor"]
    extra_min = c["load_min"] - c["floor_min"]
    print(f"%load_ext adaptor_nb ({args.repeat} runs each, interleaved)")
    print(f"  {'':28} {'median':>8} {'min':>8}")
    print(f"  {'ipython -c pass':28} {c['floor']:>8.3f} {c['floor_min']:>8.3f}")
    print(f"  {'ipython -c %load_ext ...':28} {c['load']:>8.3f} {c['load_min']:>8.3f}")
    print(f"  {'extra':28} {extra:>+8.3f} {extra_min:>+8.3f}")
    print(f"  in process: import adaptor_nb {c['import_core']:.3f} s, registering the extension {c['register']:.4f} s")
    verdict = "met" if extra_min <= LOAD_TARGET else "MISSED"
    print(f"  target <= {LOAD_TARGET:.2f} s above the floor (on the min): {verdict}")
    return 0 if (ok_rate and w["exact"]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
