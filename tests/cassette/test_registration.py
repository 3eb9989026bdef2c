"""The cassette registers itself with the driver door: the door names no cassette, the environment still starts one."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import adaptor_nb
from adaptor_nb.cassette._format import dump

TAP = Path(adaptor_nb.__file__).resolve().parent / "driver" / "_tap.py"


def test_the_driver_door_imports_no_cassette() -> None:
    tree = ast.parse(TAP.read_text(encoding="utf-8"))
    modules = [
        (n.module or "") if isinstance(n, ast.ImportFrom) else alias.name
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for alias in n.names
    ]
    assert modules and not [m for m in modules if "cassette" in m or m == "importlib"]
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and "import_module" in ast.unparse(n.func)]
    assert not calls, "the door loads a module by name"


def _active_tap(env: dict[str, str], code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return out.stdout.strip()


def test_the_environment_names_the_cassette_the_first_run_goes_through(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(dump([]))
    env = {**os.environ, "ADAPTOR_NB_CASSETTE": str(path), "ADAPTOR_NB_RECORD_MODE": "once"}
    # only the driver door is imported: the cassette registered itself when the package was
    code = "from adaptor_nb.driver import _tap; t = _tap.active(); print(type(t).__name__, t.mode, t.path.name)"
    assert _active_tap(env, code) == "Cassette once runs.jsonl"
    env.pop("ADAPTOR_NB_CASSETTE")
    assert _active_tap(env, "from adaptor_nb.driver import _tap; print(_tap.active())") == "None"


def test_a_tap_installed_before_the_first_ask_wins_over_the_environment(tmp_path: Path) -> None:
    first, other = tmp_path / "first.jsonl", tmp_path / "env.jsonl"
    env = {**os.environ, "ADAPTOR_NB_CASSETTE": str(other)}
    code = (
        f"from adaptor_nb import cassette; from adaptor_nb.driver import _tap; cassette.use({str(first)!r}, 'once');"
        "print(_tap.active().path.name, len(cassette._cassette._ACTIVE))"
    )
    assert _active_tap(env, code) == "first.jsonl 1"
