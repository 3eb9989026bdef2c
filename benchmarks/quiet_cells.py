"""Benchmark: kernel CPU of a ``%%agent --quiet`` cell against the same run through the plain API, in one real kernel.

A run of 100,000 text deltas (the paced driver of ``widget_updates.py``) is sent three times each way; the kernel's own
process CPU time is read around each cell, and the medians are printed side by side. Target: ``--quiet`` at most 1.1×
the plain API (the cell adds only option parsing and the Done wait, no view).

Run: ``.venv/bin/python benchmarks/quiet_cells.py [--deltas N] [--repeat R]``.
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

TARGET = 1.1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    env = {"ADAPTOR_NB_DRIVER": "reference", "ADAPTOR_NB_THREAD_STORE": str(tmp / "t.sqlite"), "PYTHONPATH": str(ROOT)}
    kernel = Kernel(tmp, env)
    try:
        kernel.run_ok("%load_ext adaptor_nb")
        kernel.run_ok(
            f"import sys, time; sys.path.insert(0, {str(ROOT / 'benchmarks')!r})\n"
            "from widget_updates import PacedDriver\nfrom adaptor_nb import Agent\n"
            f"agent = Agent(PacedDriver({args.deltas}, 0.2))"
        )
        quiet: list[float] = []
        plain: list[float] = []
        for _ in range(args.repeat):
            kernel.run_ok("_c0 = time.process_time()")
            kernel.run_ok("%%agent --agent agent --quiet\ngo")
            quiet.append(float(kernel.run_ok("print(time.process_time() - _c0)").text()))
            kernel.run_ok("_c0 = time.process_time()")
            kernel.run_ok("_r = await agent.send('go').result()")
            plain.append(float(kernel.run_ok("print(time.process_time() - _c0)").text()))
    finally:
        kernel.shutdown()
    q, p = statistics.median(quiet), statistics.median(plain)
    verdict = "met" if q / p <= TARGET else "NOT met"
    print(f"{args.deltas:,} text deltas, kernel CPU, median of {args.repeat}")
    print(f"  %%agent --quiet cell     {q:.3f} s")
    print(f"  plain API (baseline)     {p:.3f} s")
    print(f"  ratio                    {q / p:.2f}x   (target <= {TARGET}x: {verdict})")


if __name__ == "__main__":
    main()
