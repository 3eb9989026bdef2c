"""Benchmark: kernel CPU of an ``%%agent`` cell with its live view against the same run through the plain API.

A run of 100,000 text deltas (the paced driver of ``widget_updates.py``) is sent several times each way in one real
kernel that stands in for a front end (``ADAPTOR_NB_LIVE_VIEW=1``: the view is a widget whose updates go out as comm
messages); the kernel's own process CPU time is read around each cell, and the medians are printed side by side,
with the ``--quiet`` cell for reference. The first round of cells is printed apart: it includes the one-time imports
of a kernel's first live view. Target: the live view at most 1.5x the plain API.

Run: ``.venv/bin/python benchmarks/live_view_cells.py [--deltas N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from notebook.kernel import Kernel  # noqa: E402

TARGET = 1.5
CELLS = {
    "view": "%%agent --agent agent\ngo",
    "quiet": "%%agent --agent agent --quiet\ngo",
    "plain": "_r = await agent.send('go').result()",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    env = {
        "ADAPTOR_NB_DRIVER": "reference",
        "ADAPTOR_NB_THREAD_STORE": str(tmp / "t.sqlite"),
        "ADAPTOR_NB_LIVE_VIEW": "1",
        "PYTHONPATH": str(ROOT),
    }
    kernel = Kernel(tmp, env)
    cpu: dict[str, list[float]] = {name: [] for name in CELLS}
    try:
        kernel.run_ok("%load_ext adaptor_nb")
        kernel.run_ok(
            f"import sys, time; sys.path.insert(0, {str(ROOT / 'benchmarks')!r})\n"
            "from widget_updates import PacedDriver\nfrom adaptor_nb import Agent\n"
            f"agent = Agent(PacedDriver({args.deltas}, 0.2))"
        )
        for _ in range(args.repeat + 1):
            for name, cell in CELLS.items():
                kernel.run_ok("_c0 = time.process_time()")
                kernel.run_ok(cell)
                cpu[name].append(float(kernel.run_ok("print(time.process_time() - _c0)").text()))
    finally:
        kernel.shutdown()
    first = {name: runs.pop(0) for name, runs in cpu.items()}  # the kernel's first cell of each kind: imports
    view, quiet, plain = (statistics.median(cpu[n]) for n in ("view", "quiet", "plain"))
    verdict = "met" if view / plain <= TARGET else "NOT met"
    print(f"{args.deltas:,} text deltas, kernel CPU, median of {args.repeat} after a first round")
    print(f"  %%agent cell, live view  {view:.3f} s   {view / plain:.2f}x   (target <= {TARGET}x: {verdict})")
    print(f"  %%agent --quiet cell     {quiet:.3f} s   {quiet / plain:.2f}x")
    print(f"  plain API (baseline)     {plain:.3f} s")
    print(
        f"first round (one-time imports included): live view {first['view']:.3f} s, --quiet {first['quiet']:.3f} s, "
        f"plain API {first['plain']:.3f} s"
    )


if __name__ == "__main__":
    main()
