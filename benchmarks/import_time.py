"""Import cost of ``import adaptor_nb`` and of the full core in fresh interpreters, beside ``import asyncio``.

Run: ``.venv/bin/python benchmarks/import_time.py [--repeat 15] [--module adaptor_nb] [--old-tree /tmp/old]``

Each round starts one child for the floor (``python -c pass``), one for ``import asyncio`` (the part no asyncio
library can avoid), one for the import and one for the full core (``from adaptor_nb import Agent`` plus ``from
adaptor_nb.drivers import claude``: what building an Agent over the Claude driver loads), with the interpreter running
this script; the figures are medians of wall time from spawn to exit, of the child's CPU time and of its peak RSS
(``ru_utime + ru_stime`` and ``ru_maxrss`` from ``wait4``). The full core is reported as a multiple of ``import
asyncio`` measured in the same rounds (target ≤ 2.5× and ≤ 24 MiB peak RSS). With ``--old-tree`` every round also
runs the same imports from that checkout (its parent on ``PYTHONPATH``), alternating with this one. It then lists
the third-party packages the import pulls in, the slowest imports by ``-X importtime``, and checks that the heavy
optional dependencies stay unloaded.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_SECONDS = 0.15
TARGET_RSS_MIB = 45.0
FULL_CORE = "from adaptor_nb import Agent; from adaptor_nb.drivers import claude"
TARGET_CORE_RATIO = 2.5  # the full core against `import asyncio`, wall and CPU
TARGET_CORE_RSS_MIB = 24.0
HERE = Path(__file__).resolve().parents[1]
MUST_NOT_IMPORT = ("pydantic", "jsonschema", "pandas", "ipywidgets", "anywidget")
ALSO_WATCHED = ("numpy", "IPython", "traitlets", "ipykernel", "tornado", "zmq", "jupyter_client", "pytest")


def child_env(tree: Path) -> dict[str, str]:
    """``tree`` first on the path, and bytecode written (the warm-up round compiles it, as an install would)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def spawn(code: str, tree: Path = HERE) -> tuple[float, float, float]:
    """Run ``python -c code`` once with ``tree`` first on the path; returns wall s, CPU s and peak RSS (MiB)."""
    env = child_env(tree)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tree, env=env
    )
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
        cwd=HERE,
        env=child_env(HERE),
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def slowest_imports(code: str, top: int) -> list[tuple[int, str]]:
    """The ``top`` imports with the largest cumulative time (µs) under ``-X importtime``."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        check=True,
        capture_output=True,
        text=True,
        cwd=HERE,
        env=child_env(HERE),
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
    parser.add_argument("--old-tree", type=Path, help="a checkout of an older revision, measured in the same rounds")
    args = parser.parse_args()
    code = f"import {args.module}"
    trees = {"": HERE} if args.old_tree is None else {"": HERE, "old: ": args.old_tree.resolve()}
    subjects = {"python -c pass": "pass", "import asyncio": "import asyncio", code: code, "full core": FULL_CORE}
    runs = {f"{prefix}{label}": (c, tree) for prefix, tree in trees.items() for label, c in subjects.items()}
    for c, tree in runs.values():  # warm the OS caches
        spawn(c, tree)
    rounds: dict[str, list[tuple[float, float, float]]] = {label: [] for label in runs}
    for _ in range(args.repeat):
        for label, (c, tree) in runs.items():
            rounds[label].append(spawn(c, tree))
    med = {label: tuple(statistics.median(r[i] for r in rs) for i in range(3)) for label, rs in rounds.items()}
    print(f"import time: median of {args.repeat} fresh interpreters per row, rows alternating ({sys.executable})")
    print(f"  full core = `{FULL_CORE}`")
    for prefix, tree in trees.items():
        print(f"\n  {'tree ' + str(tree):<44} {'wall':>9} {'CPU':>9} {'peak RSS':>12}")
        for label in subjects:
            wall, cpu, rss = med[prefix + label]
            print(f"  {label:<44} {wall * 1000:6.1f} ms {cpu * 1000:6.1f} ms {rss:8.1f} MiB")
        ft, fc, fm = med[prefix + "python -c pass"]
        it, ic, im = med[prefix + code]
        at, ac, am = med[prefix + "import asyncio"]
        ct, cc, cm = med[prefix + "full core"]
        over = it - ft
        print(f"  {code + ' over the floor':<44} {over * 1000:6.1f} ms {(ic - fc) * 1000:6.1f} ms {im - fm:8.1f} MiB")
        print(
            f"  target: ≤ {TARGET_SECONDS:g} s over the floor: {'met' if over <= TARGET_SECONDS else 'MISSED'} (wall), "
            f"{'met' if ic - fc <= TARGET_SECONDS else 'MISSED'} (CPU); "
            f"≤ {TARGET_RSS_MIB:g} MiB peak RSS: {'met' if im <= TARGET_RSS_MIB else 'MISSED'}"
        )
        ok_ratio = ct / at <= TARGET_CORE_RATIO
        print(
            f"  full core / `import asyncio`: {ct / at:.2f}× wall, {cc / ac:.2f}× CPU, {cm:.1f} MiB peak RSS "
            f"({cm - am:+.1f} MiB over asyncio); target ≤ {TARGET_CORE_RATIO:g}× and ≤ {TARGET_CORE_RSS_MIB:g} MiB: "
            f"{'met' if ok_ratio else 'MISSED'} (wall), {'met' if cm <= TARGET_CORE_RSS_MIB else 'MISSED'} (RSS)"
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
    for micros, name in slowest_imports(code, args.top):
        print(f"    {micros / 1000:7.1f} ms  {name}")
    core = loaded_modules(FULL_CORE) - loaded_modules("import asyncio")
    core_third = sorted({m.split(".")[0] for m in core} - stdlib - {"adaptor_nb"})
    core_std = sorted({m.split(".")[0] for m in core if m.split(".")[0] in stdlib})
    own_core = sum(m.split(".")[0] == "adaptor_nb" for m in core)
    print(f"\nthe full core loads {len(core)} modules beyond `import asyncio` ({own_core} of adaptor_nb)")
    print(f"  third-party packages: {', '.join(core_third) if core_third else 'none'}")
    print(f"  standard-library packages: {', '.join(core_std)}")
    print("  slowest imports (cumulative, -X importtime):")
    for micros, name in slowest_imports("import asyncio\n" + FULL_CORE, args.top):
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
