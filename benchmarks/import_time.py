"""Import cost of ``import adaptor_nb`` in fresh interpreters, beside ``python -c pass`` as the floor.

Run: ``.venv/bin/python benchmarks/import_time.py [--repeat 15] [--module adaptor_nb]``

Each round starts one child for the floor, one for ``import asyncio`` (the part no asyncio library can avoid) and one
for the import, with the interpreter running this script; the figures are medians of wall time from spawn to exit,
of the child's CPU time and of its peak RSS (``ru_utime + ru_stime`` and ``ru_maxrss`` from ``wait4``). It then
lists the third-party packages the import pulls in, the slowest imports by ``-X importtime``, and checks that the
heavy optional dependencies stay unloaded.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

TARGET_SECONDS = 0.15
TARGET_RSS_MIB = 45.0
MUST_NOT_IMPORT = ("pydantic", "jsonschema", "pandas", "ipywidgets", "anywidget")
ALSO_WATCHED = ("numpy", "IPython", "traitlets", "ipykernel", "tornado", "zmq", "jupyter_client", "pytest")


def spawn(code: str) -> tuple[float, float, float]:
    """Run ``python -c code`` once; returns wall seconds, CPU seconds and peak RSS (MiB) of the child."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"child `{code}` failed with exit code {proc.returncode}:\n{stderr}")
    if proc.stderr:
        proc.stderr.close()
    cpu = usage.ru_utime + usage.ru_stime
    return seconds, cpu, usage.ru_maxrss / 1024  # ru_maxrss is KiB on Linux


def loaded_modules(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
        check=True,
        capture_output=True,
        text=True,
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def slowest_imports(module: str, top: int) -> list[tuple[int, str]]:
    """The ``top`` imports with the largest cumulative time (µs) under ``-X importtime``."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"], check=True, capture_output=True, text=True
    )
    rows: list[tuple[int, str]] = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, _, rest = line.partition(":")
        parts = [p.strip() for p in rest.split("|")]
        if len(parts) == 3 and parts[1].isdigit():
            rows.append((int(parts[1]), parts[2]))
    rows.sort(reverse=True)
    return rows[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--module", default="adaptor_nb")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    code = f"import {args.module}"
    subjects = {"python -c pass": "pass", "import asyncio": "import asyncio", code: code}
    for c in subjects.values():  # warm the OS caches
        spawn(c)
    rounds: dict[str, list[tuple[float, float, float]]] = {label: [] for label in subjects}
    for _ in range(args.repeat):
        for label, c in subjects.items():
            rounds[label].append(spawn(c))
    med = {label: tuple(statistics.median(r[i] for r in rs) for i in range(3)) for label, rs in rounds.items()}
    ft, fc, fm = med["python -c pass"]
    it, ic, im = med[code]
    over = it - ft
    print(f"import time: `{code}` vs `python -c pass`, median of {args.repeat} fresh interpreters ({sys.executable})")
    print(f"  {'':<34} {'wall':>9} {'CPU':>9} {'peak RSS':>12}")
    for label, (wall, cpu, rss) in med.items():
        print(f"  {label:<34} {wall * 1000:6.1f} ms {cpu * 1000:6.1f} ms {rss:8.1f} MiB")
    print(f"  {code + ' over the floor':<34} {over * 1000:6.1f} ms {(ic - fc) * 1000:6.1f} ms {im - fm:8.1f} MiB")
    print(
        f"  target: ≤ {TARGET_SECONDS:g} s over the floor: {'met' if over <= TARGET_SECONDS else 'MISSED'} (wall), "
        f"{'met' if ic - fc <= TARGET_SECONDS else 'MISSED'} (CPU); "
        f"≤ {TARGET_RSS_MIB:g} MiB peak RSS: {'met' if im <= TARGET_RSS_MIB else 'MISSED'}"
    )

    base = loaded_modules("pass")
    after = loaded_modules(code)
    new = after - base
    stdlib = set(sys.stdlib_module_names)
    third = sorted({m.split(".")[0] for m in new} - stdlib - {args.module.split(".")[0]})
    own = sorted(m for m in new if m.split(".")[0] == args.module.split(".")[0])
    std = sorted(m for m in new if m.split(".")[0] in stdlib)
    print(f"\nmodules loaded by `{code}`: {len(new)} new ({len(own)} own, {len(std)} standard library)")
    print(f"  third-party packages: {', '.join(third) if third else 'none'}")
    top_std = sorted({m.split(".")[0] for m in std})
    print(f"  standard-library packages: {', '.join(top_std)}")
    print("  slowest imports (cumulative, -X importtime):")
    for micros, name in slowest_imports(args.module, args.top):
        print(f"    {micros / 1000:7.1f} ms  {name}")
    print("\nheavy modules that must stay unloaded:")
    bad = []
    for name in MUST_NOT_IMPORT:
        hit = any(m == name or m.startswith(name + ".") for m in after)
        bad += [name] if hit else []
        print(f"  {name:<15} {'IMPORTED (fail)' if hit else 'not imported (ok)'}")
    watched = [n for n in ALSO_WATCHED if any(m == n or m.startswith(n + ".") for m in after)]
    print(f"  also loaded from the watch list: {', '.join(watched) if watched else 'none'}")
    print(f"\ncheck: {'FAILED: ' + ', '.join(bad) + ' imported' if bad else 'passed, none of them is imported'}")


if __name__ == "__main__":
    main()
