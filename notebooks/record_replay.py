"""Record ``replay.ipynb`` on the real Claude Code and Codex CLIs against the local fake model servers.

Run ``.venv/bin/python notebooks/record_replay.py [FOLDER]``: it starts the fake Anthropic and OpenAI servers,
points both CLIs at them (private HOME and CODEX_HOME, throwaway keys), executes the notebook in FOLDER (default:
this folder) with ``$ADAPTOR_NB_RECORD_MODE=rewrite`` and saves it with its outputs; the cassette
``replay.jsonl`` lands beside it. Afterwards ``pytest --nbval replay.ipynb`` replays it with no CLI, key or
server.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import nbformat
from adaptor_nb.drivers.codex._home import provider_settings, write_codex_home
from adaptor_nb.testing import FakeAnthropicServer, FakeOpenAIServer, find_cli
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
NAME = "replay.ipynb"
CASSETTE = "replay.jsonl"
QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_MAX_RETRIES": "0",
    "NO_COLOR": "1",
}


@contextmanager
def recording_env(scratch: Path) -> Iterator[dict[str, str]]:
    """The environment a kernel records in: both CLIs on PATH, each pointed at its running fake server."""
    claude, codex = find_cli("claude"), find_cli("codex")
    if claude is None or codex is None:
        raise SystemExit("the claude and codex CLIs are needed to record (bash scripts/setup.sh installs them)")
    home = scratch / "home"
    home.mkdir(parents=True, exist_ok=True)
    with FakeAnthropicServer() as anthropic, FakeOpenAIServer() as openai:
        settings = provider_settings(
            base_url=openai.base_url, env_key="FAKE_OPENAI_API_KEY", request_max_retries=0, stream_max_retries=0
        )
        codex_home = write_codex_home(scratch / "codex-home", settings)
        path = os.pathsep.join([str(Path(claude).parent), str(Path(codex).parent), os.environ.get("PATH", "")])
        yield {
            **QUIET,
            "HOME": str(home),
            "PATH": path,
            "ANTHROPIC_BASE_URL": anthropic.url,
            "ANTHROPIC_API_KEY": "sk-ant-recording-only-0123456789",
            "CODEX_HOME": str(codex_home),
            "FAKE_OPENAI_API_KEY": "sk-recording-only-0123456789",
            "ADAPTOR_NB_RECORD_MODE": "rewrite",
        }


def execute(path: Path, env: Mapping[str, str]) -> None:
    """Run the notebook at ``path`` top to bottom in a fresh kernel with ``env`` and save its outputs."""
    book = nbformat.read(path, as_version=4)
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        resources = {"metadata": {"path": str(path.parent)}}
        NotebookClient(book, timeout=300, kernel_name="python3", resources=resources).execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    nbformat.write(book, path)


def record(folder: Path) -> Path:
    """Record ``replay.ipynb`` in ``folder``; returns the cassette's path."""
    with tempfile.TemporaryDirectory() as tmp, recording_env(Path(tmp)) as env:
        execute(folder / NAME, env)
    return folder / CASSETTE


def main(args: list[str]) -> int:
    folder = Path(args[0]).resolve() if args else HERE
    if folder != HERE and not (folder / NAME).exists():
        shutil.copy(HERE / NAME, folder / NAME)
    print(f"recorded {record(folder)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
