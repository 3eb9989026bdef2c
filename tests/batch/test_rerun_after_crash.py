"""A batch whose calling process (the kernel) is killed mid-run, run again by a new process: finished rows are
answered from the cache and only the others run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).with_name("rerun_worker.py")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("threads", [False, True], ids=["rows", "threads"])
def test_a_rerun_after_the_kernel_died_runs_only_the_rows_not_yet_done(tmp_path: Path, threads: bool) -> None:
    cache, log = tmp_path / "rows.sqlite", tmp_path / "runs.log"
    store = str(tmp_path / "threads.sqlite") if threads else "-"
    first = subprocess.Popen(
        [sys.executable, str(WORKER), str(cache), str(log), store, "row 3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert first.stdout is not None
        line = first.stdout.readline()  # the batch is in the middle of row 3
        os.kill(first.pid, signal.SIGKILL)
    finally:
        first.kill()
        _, err = first.communicate()
    assert line.strip() == "stalled", err
    assert first.returncode == -signal.SIGKILL
    assert log.read_text().splitlines() == ["row 0", "row 1", "row 2", "row 3"]

    log.write_text("")
    second = subprocess.run(
        [sys.executable, str(WORKER), str(cache), str(log), store],
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert second.returncode == 0, second.stderr
    out = json.loads(second.stdout.splitlines()[-1])
    assert log.read_text().splitlines() == ["row 3", "row 4", "row 5"], "only the rows not done before may run"
    assert out["status"] == {"r0": "cached", "r1": "cached", "r2": "cached", "r3": "ok", "r4": "ok", "r5": "ok"}
    assert all(f"row {i}" in out["text"][f"r{i}"] for i in range(6))
    if threads:  # rows 0-2 were not run again; row 3's thread, whose killed run never finished, ran once
        assert out["runs"] == {f"row-{i}": 1 for i in range(6)}
