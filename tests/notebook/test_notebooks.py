"""The notebooks in notebooks/ run under nbval: strict output comparison on the offline demo driver."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_the_notebooks_exist() -> None:
    assert {p.stem for p in NOTEBOOKS} == {
        "quickstart",
        "threads",
        "approvals",
        "structured_output",
        "live_tool_calls",
        "batch_extraction",
        "tools",
        "replay",
    }


def test_notebook_outputs_match_under_nbval(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "ADAPTOR_NB_DRIVER": "reference",
        "ADAPTOR_NB_THREAD_STORE": str(tmp_path / "threads.adaptor_nb.sqlite"),
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--nbval",
            "--nbval-current-env",
            "-q",
            "--rootdir",
            str(tmp_path),
            *[str(p) for p in NOTEBOOKS],
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=280,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
