"""Supplemental messages on a Codex cassette: SOON steers the running turn (``turn/steer``), AFTER_TURN starts the
next one (``turn/start``). Recorded on the real CLI against the fake OpenAI server, replayed with neither."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _support import require_cli
from codex.helpers import Watcher

from adaptor_nb import Agent, MessageState, MessageUpdate, Notice, ProcessInfo, Timing, TurnEnd
from adaptor_nb.cassette import Cassette
from adaptor_nb.drivers import codex
from adaptor_nb.drivers.codex._home import provider_settings, write_codex_home
from adaptor_nb.testing import FakeOpenAIServer

from .test_codex_cassette import KEY_ENV, _config

STEER = "also mention cats [[say steered answer]]"
AFTER = "now the follow-up [[say second answer]]"


async def _session(config: codex.Config, workspace: Path, fake: FakeOpenAIServer | None) -> list[Any]:
    async with Agent(codex.Driver(config), workspace=str(workspace)) as agent:
        thread = agent.thread("steer")
        out = []
        for n, (hold, text, when) in enumerate((("g", STEER, Timing.SOON), ("h", AFTER, Timing.AFTER_TURN)), 1):
            stream = thread.send(f"turn {n} [[hold {hold}]] [[say answer {n}]]")
            watch = Watcher(stream)
            if fake is not None:
                await fake.model_request(len(fake.model_requests) + 1)  # live: the turn is running, held
            await stream.send(text, id=f"m-{n}", when=when)
            if when is Timing.SOON:
                await watch.wait_for(lambda e: isinstance(e, MessageUpdate) and e.state is MessageState.DELIVERED)
            if fake is not None:
                fake.hold(hold).set()
            out.append(await watch.finish())
        return out


def _kinds(events: list[Any]) -> list[str]:
    """The events' kinds, without stderr and without the message's acceptance: live, the message is sent once the
    fake server has the model request; on replay at once (the player holds the recording at that point)."""
    return [
        type(e).__name__
        for e in events
        if not isinstance(e, ProcessInfo | Notice)
        and not (isinstance(e, MessageUpdate) and e.state is MessageState.ACCEPTED)
    ]


def _updates(events: list[Any]) -> list[tuple[str, str, str, str, int]]:
    return [(u.id, u.state.name, u.boundary, u.mechanism, u.turn) for u in events if isinstance(u, MessageUpdate)]


async def test_steered_and_follow_up_messages_replay_without_cli_or_server(tmp_path: Path, workspace: Path) -> None:
    cli = require_cli("codex", "run `bash scripts/setup.sh`")
    tape = tmp_path / "codex-messages.jsonl"
    with FakeOpenAIServer() as fake, Cassette(tape, mode="rewrite") as rec:
        settings = provider_settings(base_url=fake.base_url, env_key=KEY_ENV, request_max_retries=0)
        home = write_codex_home(tmp_path / "codex-home", settings)
        live = await _session(_config([cli], home, workspace), workspace, fake)
    assert rec.recorded == 2
    frames = [json.loads(line) for line in tape.read_text().splitlines()]
    assert [f["msg"] for f in frames if "msg" in f] == [STEER, AFTER]
    methods = [f["in"].get("method") for f in frames if isinstance(f.get("in"), dict)]
    assert "turn/steer" in methods and methods.count("turn/start") == 3
    (steer_live, after_live) = live
    assert steer_live[2] is None and after_live[2] is None
    assert _updates(steer_live[0])[-1] == ("m-1", "DELIVERED", "in_run", "turn/steer", 1)
    assert _updates(after_live[0])[-1] == ("m-2", "DELIVERED", "turn_end", "turn/start", 2)

    with Cassette(tape, mode="none") as play:
        replayed = await _session(_config([str(tmp_path / "no-codex")], home, workspace), workspace, None)
    assert play.replayed == 2
    for (ev_live, res_live, _), (ev_play, res_play, err_play) in zip(live, replayed, strict=True):
        assert err_play is None, err_play
        assert _kinds(ev_play) == _kinds(ev_live)
        assert _updates(ev_play) == _updates(ev_live)
        assert [t.message_ids for t in ev_play if isinstance(t, TurnEnd)] == [
            t.message_ids for t in ev_live if isinstance(t, TurnEnd)
        ]
        assert (res_play.text, res_play.turns) == (res_live.text, res_live.turns)
        assert [(m.id, m.state, m.boundary, m.turn) for m in res_play.messages()] == [
            (m.id, m.state, m.boundary, m.turn) for m in res_live.messages()
        ]
