"""Run notebooks under strict nbval in an environment with no agent CLI, no API key and no model server."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
DEMO = NOTEBOOKS / "replay.ipynb"
DEMO_CASSETTE = NOTEBOOKS / "replay.jsonl"
_PLUGIN = "adaptor_nb.cassette._pytest"


def offline_env(tmp: Path) -> dict[str, str]:
    """A bare environment: this interpreter and the system tools on PATH, a private HOME, nothing else."""
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    assert shutil.which("claude", path=path) is None and shutil.which("codex", path=path) is None
    env = {"PATH": path, "HOME": str(home), "LANG": "C.UTF-8"}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def plugin_installed() -> bool:
    from importlib.metadata import entry_points

    return any(ep.value == _PLUGIN for ep in entry_points(group="pytest11"))


def nbval(folder: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``pytest --nbval`` (strict) in ``folder`` with ``env``; the cassette plugin is loaded when not installed."""
    plugin = [] if plugin_installed() else ["-p", _PLUGIN]
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *plugin, "--nbval", "--nbval-current-env"]
    return subprocess.run(
        [*argv, "-q", "--rootdir", str(folder), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        timeout=400,
    )


def copy_demo(folder: Path) -> Path:
    shutil.copy(DEMO, folder / DEMO.name)
    shutil.copy(DEMO_CASSETTE, folder / DEMO_CASSETTE.name)
    return folder / DEMO.name


def recorder() -> ModuleType:
    """notebooks/record_replay.py, the script that records the demo."""
    spec = importlib.util.spec_from_file_location("record_replay", NOTEBOOKS / "record_replay.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
