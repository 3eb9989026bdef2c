"""Record a two-turn Codex thread (JSON-RPC over the app-server's stdio), then replay it with no CLI or server."""

from __future__ import annotations

import json
from pathlib import Path

from _support import drain, require_cli

from adaptor_nb import Agent, Notice, ProcessInfo, Thinking
from adaptor_nb.cassette import Cassette
from adaptor_nb.drivers import codex
from adaptor_nb.drivers.codex._home import provider_settings, write_codex_home
from adaptor_nb.testing import FakeOpenAIServer

KEY_ENV = "FAKE_OPENAI_API_KEY"
KEY = "sk-codex-cassette-secret-0123456789"
PROMPTS = ("[[think adding up]] [[say four]]", "[[say and again: four]]")


def _config(command: list[str], home: Path, workspace: Path) -> codex.Config:
    return codex.Config(
        command=command,
        codex_home=str(home),
        cwd=str(workspace),
        secret_env={KEY_ENV: KEY},
        startup_timeout=60.0,
    )


def _kinds(events: list[object]) -> list[str]:
    return [type(e).__name__ for e in events if not isinstance(e, ProcessInfo | Notice)]


async def _thread(config: codex.Config, workspace: Path) -> list[tuple[list[object], object, object]]:
    agent = Agent(codex.Driver(config), workspace=str(workspace))
    try:
        thread = agent.thread("sums")
        return [await drain(thread.send(p)) for p in PROMPTS]
    finally:
        await agent.close()


async def test_a_recorded_codex_thread_replays_without_cli_or_server(tmp_path: Path, workspace: Path) -> None:
    cli = require_cli("codex", "run `bash scripts/setup.sh`")
    tape = tmp_path / "codex.jsonl"
    with FakeOpenAIServer() as fake, Cassette(tape, mode="rewrite"):
        settings = provider_settings(base_url=fake.base_url, env_key=KEY_ENV, request_max_retries=0)
        home = write_codex_home(tmp_path / "codex-home", settings)
        live = await _thread(_config([cli], home, workspace), workspace)
    text = tape.read_text()
    assert KEY not in text and str(tmp_path) not in text
    frames = [json.loads(line) for line in text.splitlines()]
    methods = [f["in"].get("method") for f in frames if isinstance(f.get("in"), dict)]
    assert "initialize" in methods and methods.count("turn/start") == 2

    with Cassette(tape, mode="none") as play:
        replayed = await _thread(_config([str(tmp_path / "no-codex")], home, workspace), workspace)
    assert play.replayed == 2
    for (ev_live, res_live, err_live), (ev_play, res_play, err_play) in zip(live, replayed, strict=True):
        assert err_live is None and err_play is None, err_play
        assert res_play.text == res_live.text  # type: ignore[attr-defined]
        # stderr (ProcessInfo chunks, notices) interleaves with stdout as the scheduler has it, live or replayed
        assert _kinds(ev_play) == _kinds(ev_live)
    assert [r[1].text for r in replayed] == ["four", "and again: four"]  # type: ignore[attr-defined]
    assert [e.text for e in replayed[0][0] if isinstance(e, Thinking)]
