"""The demo notebook replays from its committed cassette under strict nbval with no CLI, key or server."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from _support import require_cli

from .nbrun import DEMO_CASSETTE, copy_demo, nbval, offline_env, recorder

pytestmark = pytest.mark.slow


def _outputs(path: Path) -> list[str]:
    book = nbformat.read(path, as_version=4)
    return [json.dumps(c.get("outputs", []), sort_keys=True) for c in book.cells if c.cell_type == "code"]


def test_the_committed_demo_replays_without_cli_key_or_server(tmp_path: Path) -> None:
    notebook = copy_demo(tmp_path)
    before = (tmp_path / DEMO_CASSETTE.name).read_bytes()
    proc = nbval(tmp_path, notebook.name, env=offline_env(tmp_path))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "7 passed" in proc.stdout
    assert (tmp_path / DEMO_CASSETTE.name).read_bytes() == before  # mode none never writes
    assert len(before) < 64 * 1024  # small enough to commit


def test_the_demo_cassette_holds_no_secret_or_path() -> None:
    text = DEMO_CASSETTE.read_text()
    assert "sk-" not in text and "recording-only" not in text
    assert "/tmp/" not in text and "/home/" not in text and "/root" not in text
    runs = [json.loads(line) for line in text.splitlines() if '"run"' in line[:8]]
    places = [(r["run"]["cell"], r["run"]["driver"]) for r in runs]
    assert places == [("agent cell 1", "claude"), ("agent cell 2", "codex")]


def test_a_changed_prompt_fails_naming_the_cell_and_the_prompt(tmp_path: Path) -> None:
    notebook = copy_demo(tmp_path)
    book = nbformat.read(notebook, as_version=4)
    cell = next(c for c in book.cells if c.source.startswith("%%agent --driver codex"))
    cell.source = cell.source.replace("Which is larger", "Which is smaller")
    nbformat.write(book, notebook)
    proc = nbval(tmp_path, notebook.name, env=offline_env(tmp_path))
    assert proc.returncode != 0
    assert "CassetteError" in proc.stdout and "agent cell 2" in proc.stdout
    assert "the prompt changed: it is now 'Which is smaller" in proc.stdout
    assert "the recording is for 'Which is larger" in proc.stdout


def test_the_pytest_option_replays_a_notebook_that_names_no_cassette(tmp_path: Path) -> None:
    notebook = copy_demo(tmp_path)
    book = nbformat.read(notebook, as_version=4)
    book.cells = [c for c in book.cells if not c.source.startswith("%agent record")]
    nbformat.write(book, notebook)
    args = ["--agent-cassette", DEMO_CASSETTE.name, "--agent-record-mode", "none", notebook.name]
    proc = nbval(tmp_path, *args, env=offline_env(tmp_path))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


@pytest.mark.claude
@pytest.mark.codex
def test_recording_the_demo_on_the_real_clis_then_replaying_it_offline(tmp_path: Path) -> None:
    require_cli("claude", "run `bash scripts/setup.sh`")
    require_cli("codex", "run `bash scripts/setup.sh`")
    notebook = copy_demo(tmp_path)
    (tmp_path / DEMO_CASSETTE.name).unlink()
    cassette = recorder().record(tmp_path)
    recorded = _outputs(notebook)
    text = cassette.read_text()
    assert '"driver": "claude"' in text and '"driver": "codex"' in text
    assert "one two three" in "".join(recorded) and "1024 is larger" in "".join(recorded)
    proc = nbval(tmp_path, notebook.name, env=offline_env(tmp_path))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
