"""The same figures and words in the live view, its static forms and ``%agent status``: one duration, one token
wording, and URLs and paths printed intact."""

from __future__ import annotations

from pathlib import Path

from adaptor_nb import Result, Usage
from adaptor_nb._views._model import RunState
from adaptor_nb._views._static import footer_line
from adaptor_nb.notebook._stable import stable_status

ROOT = Path(__file__).resolve().parents[2]


def test_header_elapsed_and_footer_duration_are_the_same_figure() -> None:
    state = RunState(driver="reference")
    state.finish(Result(turns=1, text="ok", usage=Usage(12, 34), duration=7.1), None)
    assert state.footer["duration"] == 7.1
    assert state.header["ended_ms"] - state.header["started_ms"] == 7100


def test_the_live_footer_words_tokens_as_the_static_footer_and_the_result_do() -> None:
    state = RunState(driver="reference")
    state.finish(Result(turns=1, text="ok", usage=Usage(12, 34), duration=1.0), None)
    assert "12 in / 34 out tokens" in footer_line(state.header, state.footer)
    widget = (ROOT / "adaptor_nb" / "_views" / "static" / "widget.js").read_text()
    assert "in / ${ft.output_tokens || 0} out tokens`" in widget
    assert "`tokens ${" not in widget
    assert "`model ${hd.model}`" in widget  # the header says "model M", as the static title does


def test_status_keeps_urls_and_home_paths_intact_when_headless() -> None:
    cursor = "install Cursor Agent with its vendor's installer (curl https://cursor.com/install -fsS | bash)"
    codex = "sign in once with `codex login` in a terminal, or name a model_provider in ~/.codex/config.toml"
    assert stable_status(cursor) == cursor
    assert "curl https:install -fsS | bash" not in stable_status(cursor)
    assert stable_status(codex) == codex
    assert "~config.toml" not in stable_status(codex)
    example = "put its `agent` on PATH, or pass Config(command=['/path/to/agent'])."
    assert stable_status(example) == example
    local = "see http://127.0.0.1:8080/a/b and $CODEX_HOME/auth.json"
    assert stable_status(local) == local


def test_status_still_shortens_this_machines_absolute_paths_when_headless() -> None:
    line = "claude: found /opt/tools/node_modules/.bin/claude, version 2.1 (thread store: /tmp/x/threads.sqlite)"
    assert stable_status(line) == "claude: found claude, version 2.1 (thread store: threads.sqlite)"
