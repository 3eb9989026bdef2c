"""Memory of reading CLI stdout: a 400 MB line without a newline, and normal output, beside the bytes themselves.

Each case runs in a fresh interpreter and reports its peak RSS above the RSS it had when the case started (imports
done), and the tracemalloc peak (Python allocations only), next to the size of the output. Cases:

* ``bytes``: the baseline. Read the writer's stdout in chunks into a list and join it: the output held once.
* ``readline``: the other baseline. A plain blocking ``readline()`` on the pipe (Python's buffered reader).
* ``reader-64m``: ``CLIProcess.readline`` with the default bound: stops the writer at 64 MiB (LineTooLong).
* ``reader-1g``: ``CLIProcess.readline`` with ``max_line=1 GiB``: the whole 400 MB line is read.
* ``claude-64m``: a whole run of the Claude driver on the stand-in CLI (tests/fuzz/standin.py) writing the line:
  fails with the RunError naming ``max_line_bytes`` at 64 MiB.
* ``claude-1g``: the same run with ``max_line_bytes`` = 1 GiB: the line is read, reported as not JSON and skipped,
  and the run ends with its result. The run keeps the raw stdout (``Result`` raw streams), so here the output is
  held by design at least once.
* ``claude-normal``: a Claude run whose output is text-delta lines of the same total size (``--normal-mb``).

``--old-tree DIR`` adds ``claude-old``: the unbounded line run against another checkout of the package (for
example ``git archive <commit> adaptor_nb | tar -x -C DIR``), to compare with the reader before the bound.

Usage: ``.venv/bin/python benchmarks/line_buffer.py [--mb 400] [--normal-mb 100] [--no-tracemalloc]``
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
STANDIN = str(ROOT / "tests" / "fuzz" / "standin.py")
MIB = 1 << 20
CASES = ("bytes", "readline", "reader-64m", "reader-1g", "claude-64m", "claude-1g", "claude-normal")


def _rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MIB


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _writer(size: int) -> list[str]:
    """A child that writes ``size`` bytes of ``x`` without a newline, then one newline."""
    code = (
        f"import sys\nb=b'x'*65536\nn={size}\nw=sys.stdout.buffer.write\n"
        "while n>0:\n    w(b[:n]); n-=65536\nw(b'\\n')\n"
    )
    return [sys.executable, "-S", "-c", code]


def _prompt(script: dict[str, Any]) -> str:
    return "FUZZ" + base64.b64encode(json.dumps(script).encode()).decode() + "ZZUF"


def _claude_lines() -> tuple[list[str], str]:
    def ev(event: dict[str, Any]) -> str:
        return json.dumps({"type": "stream_event", "event": event, "session_id": "s", "parent_tool_use_id": None})

    head = [
        json.dumps({"type": "system", "subtype": "init", "session_id": "s", "model": "m", "tools": []}),
        ev({"type": "message_start", "message": {"id": "msg_1", "model": "m"}}),
        ev({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ]
    result = json.dumps({"type": "result", "subtype": "success", "result": "done", "session_id": "s", "usage": {}})
    return head, result


def case_bytes(size: int) -> str:
    proc = subprocess.Popen(_writer(size), stdout=subprocess.PIPE)
    assert proc.stdout is not None
    chunks = []
    while chunk := proc.stdout.read1(1 << 18):
        chunks.append(chunk)
    data = b"".join(chunks)
    del chunks
    proc.wait()
    return f"{len(data)} bytes"


def case_readline(size: int) -> str:
    proc = subprocess.Popen(_writer(size), stdout=subprocess.PIPE)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    proc.stdout.read()
    proc.wait()
    return f"one line of {len(line)} bytes"


async def case_reader(size: int, bound: int | None) -> str:
    from adaptor_nb.driver import CLIProcess, LineTooLong

    kwargs = {"max_line": bound} if bound else {}
    proc = await CLIProcess.start(_writer(size), **kwargs)
    try:
        longest = 0
        while (line := await proc.readline()) is not None:
            longest = max(longest, len(line))
        return f"read, longest line {longest} bytes"
    except LineTooLong as exc:
        return f"LineTooLong after {exc.seen} bytes"
    finally:
        await proc.close(0.5)


async def case_claude(size: int, bound: int | None, *, normal: bool = False) -> str:
    from adaptor_nb import Agent
    from adaptor_nb.drivers import claude

    head, result = _claude_lines()
    if normal:
        text = "y" * 1000
        delta = json.dumps(
            {
                "type": "stream_event",
                "event": {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
                "session_id": "s",
                "parent_tool_use_id": None,
            }
        )
        script: dict[str, Any] = {"lines": head, "repeat": [delta, size // (len(delta) + 1)], "after": [result]}
    else:
        script = {"lines": head, "flood": size, "after": [result]}
    fields: dict[str, Any] = {"max_line_bytes": bound} if bound else {}
    with tempfile.TemporaryDirectory() as tmp:
        cfg = claude.Config(
            command=[sys.executable, "-S", STANDIN, "stream"], env={"HOME": tmp}, grace_period=0.5, **fields
        )
        async with Agent(claude.Driver(cfg), workspace=tmp) as agent:
            stream = agent.send(_prompt(script))
            async for _ev in stream.events():
                pass
            try:
                res = await stream.result()
            except Exception as exc:
                return f"{type(exc).__name__}: {str(exc)[:90]}"
            return f"ok, {len(res.text)} chars of text"


def run_case(name: str, size: int, normal_size: int, trace: bool) -> dict[str, Any]:
    start_rss = _rss_mib()
    if trace:
        tracemalloc.start()
    t0 = time.perf_counter()
    if name == "bytes":
        outcome = case_bytes(size)
    elif name == "readline":
        outcome = case_readline(size)
    elif name.startswith("reader-"):
        outcome = asyncio.run(case_reader(size, None if name == "reader-64m" else 1 << 30))
    elif name == "claude-normal":
        outcome = asyncio.run(case_claude(normal_size, None, normal=True))
    else:
        outcome = asyncio.run(case_claude(size, 1 << 30 if name == "claude-1g" else None))
    seconds = time.perf_counter() - t0
    traced = tracemalloc.get_traced_memory()[1] / MIB if trace else None
    return {
        "case": name,
        "outcome": outcome,
        "start_rss_mib": round(start_rss, 1),
        "peak_over_start_mib": round(_peak_mib() - start_rss, 1),
        "tracemalloc_peak_mib": None if traced is None else round(traced, 1),
        "seconds": round(seconds, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=400, help="size of the line without a newline, in MB (10^6 bytes)")
    ap.add_argument("--normal-mb", type=int, default=100, help="size of the normal output, in MB")
    ap.add_argument("--no-tracemalloc", action="store_true")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--old-tree", default="", help="another checkout of adaptor_nb for the claude-old case")
    ap.add_argument("--one", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    size, normal_size = args.mb * 10**6, args.normal_mb * 10**6
    if args.one:
        name = "claude-64m" if args.one == "claude-old" else args.one
        print(json.dumps({**run_case(name, size, normal_size, not args.no_tracemalloc), "case": args.one}))
        return
    cases = [c for c in args.cases.split(",") if c]
    if args.old_tree:
        cases.append("claude-old")
    print(f"output: {size / MIB:.0f} MiB line without a newline; normal output {normal_size / MIB:.0f} MiB")
    print(f"{'case':<14} {'peak RSS over start':>20} {'x output':>9} {'tracemalloc peak':>17} {'s':>7}  outcome")
    for name in cases:
        env = dict(os.environ)
        env["PYTHONPATH"] = args.old_tree if name == "claude-old" else str(ROOT)
        argv = [sys.executable, __file__, "--one", name, "--mb", str(args.mb), "--normal-mb", str(args.normal_mb)]
        if args.no_tracemalloc:
            argv.append("--no-tracemalloc")
        out = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            print(f"{name:<14} failed: {out.stderr.strip()[-300:]}")
            continue
        row = json.loads(out.stdout.strip().splitlines()[-1])
        basis = normal_size if name == "claude-normal" else size
        ratio = row["peak_over_start_mib"] * MIB / basis
        traced = "-" if row["tracemalloc_peak_mib"] is None else f"{row['tracemalloc_peak_mib']:.0f} MiB"
        print(
            f"{name:<14} {row['peak_over_start_mib']:>16.0f} MiB {ratio:>8.2f}x {traced:>17} "
            f"{row['seconds']:>7.1f}  {row['outcome']}"
        )


if __name__ == "__main__":
    main()
