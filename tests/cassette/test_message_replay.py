"""Supplemental messages on a cassette: recorded on the real Claude CLI, replayed with no CLI and no server.

One Thread, two sends: the first gets a SOON message while its tool waits for approval (delivered into the
running turn), the second an AFTER_TURN message while its text streams (a continuation turn). The replay sends the
same messages at the same events and must give the same events, message outcomes and results; a different
message text under replay ends the run with a CassetteError naming both texts, the message reported failed.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from _support import require_cli

from adaptor_nb import (
    Agent,
    ApprovalRequest,
    MessageState,
    MessageUpdate,
    Notice,
    ProcessInfo,
    TextDelta,
    Timing,
    TurnEnd,
)
from adaptor_nb.cassette import Cassette, CassetteError
from adaptor_nb.drivers import claude
from adaptor_nb.testing import FakeAnthropicServer
from adaptor_nb.testing._anthropic import Reply

from .test_claude_cassette import _config

SOON = "also mention the weather"
AFTER = "now the second [[say second answer]]"


def _touch(path: Path) -> str:
    return "[[tool Bash " + json.dumps({"command": f"touch {path}", "description": "create"}) + "]]"


def _kinds(events: list[Any]) -> list[str]:
    return [type(e).__name__ for e in events if not isinstance(e, ProcessInfo | Notice)]


def _updates(events: list[Any]) -> list[tuple[str, str, str, str, int]]:
    return [(u.id, u.state.name, u.boundary, u.mechanism, u.turn) for u in events if isinstance(u, MessageUpdate)]


async def _send_soon_at_approval(thread: Any, prompt: str) -> tuple[list[Any], Any, Any]:
    stream = thread.send(prompt)
    events: list[Any] = []
    async for ev in stream.events():
        events.append(ev)
        if isinstance(ev, ApprovalRequest):
            await stream.send(SOON, id="m-soon", when=Timing.SOON)
            ev.approve()
    return await _end(stream, events)


async def _send_after_at_text(thread: Any, text: str, gate: threading.Event) -> tuple[list[Any], Any, Any]:
    stream = thread.send("begin the second")
    events: list[Any] = []
    sent = False
    async for ev in stream.events():
        events.append(ev)
        if isinstance(ev, TextDelta) and ev.text and not sent:
            sent = True
            await stream.send(text, id="m-after", when=Timing.AFTER_TURN)
            gate.set()  # live: let the fake server finish the held reply
    return await _end(stream, events)


async def _end(stream: Any, events: list[Any]) -> tuple[list[Any], Any, Any]:
    try:
        return events, await stream.result(), None
    except Exception as exc:
        return events, getattr(exc, "result", None), exc


async def _session(
    config: claude.Config, workspace: Path, fake: FakeAnthropicServer | None = None, after: str = AFTER
) -> list[tuple[list[Any], Any, Any]]:
    agent = Agent(claude.Driver(config), workspace=str(workspace))
    gate = threading.Event()
    try:
        thread = agent.thread("messages")
        first = await _send_soon_at_approval(thread, f"work {_touch(workspace / 'made.txt')} [[say all done]]")
        if fake is not None:
            fake.enqueue(Reply.text("first part", chunks=3, hold=gate))  # held until the message is sent
        second = await _send_after_at_text(thread, after, gate)
        return [first, second]
    finally:
        await agent.close()


Recorded = tuple[Path, list[tuple[list[Any], Any, Any]], str]


@pytest.fixture
async def recorded(tmp_path: Path, home: Path, workspace: Path) -> Recorded:
    """The two sends recorded on the real CLI against the fake server; the cassette, what they gave, the URL."""
    cli = require_cli("claude", "run `bash scripts/setup.sh`")
    tape = tmp_path / "messages.jsonl"
    with FakeAnthropicServer() as fake, Cassette(tape, mode="rewrite") as rec:
        live = await _session(_config([cli], home, workspace, fake.url), workspace, fake)
        url = fake.url
    assert rec.recorded == 2
    (workspace / "made.txt").unlink()
    return tape, live, url


async def _replay(
    tape: Path, home: Path, workspace: Path, url: str, after: str = AFTER
) -> list[tuple[list[Any], Any, Any]]:
    config = _config([str(tape.parent / "no-such-dir" / "claude")], home, workspace, url)
    with Cassette(tape, mode="none") as play:
        out = await _session(config, workspace, after=after)
    assert play.recorded == 0
    return out


async def test_messages_sent_during_recorded_runs_replay_with_the_same_outcomes(
    recorded: Recorded, home: Path, workspace: Path
) -> None:
    tape, live, url = recorded
    frames = [json.loads(line) for line in tape.read_text().splitlines()]
    assert [f["msg"] for f in frames if "msg" in f] == [SOON, AFTER]  # where the host sent them, readable
    (soon_live, after_live) = live
    assert soon_live[2] is None and after_live[2] is None
    assert _updates(soon_live[0])[-1] == ("m-soon", "DELIVERED", "in_run", "stdin", 1)
    assert _updates(after_live[0])[-1] == ("m-after", "DELIVERED", "turn_end", "stdin", 2)
    assert (after_live[1].turns, after_live[1].text) == (2, "second answer")

    replayed = await _replay(tape, home, workspace, url)
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
    assert not (workspace / "made.txt").exists()  # the tool did not run again: its result came from the recording


async def test_a_different_message_under_replay_is_a_clear_error_not_a_hang(
    recorded: Recorded, home: Path, workspace: Path
) -> None:
    tape, _live, url = recorded
    changed = "something else entirely [[say other]]"
    first, second = await _replay(tape, home, workspace, url, after=changed)
    assert first[2] is None  # the first send still replays
    events, _result, err = second
    assert isinstance(err, CassetteError)
    assert changed in str(err) and AFTER in str(err)
    assert "thread 'messages' turn 2" in str(err)
    failed = [u for u in events if isinstance(u, MessageUpdate) and u.state is MessageState.FAILED]
    assert [(u.id, u.text) for u in failed] == [("m-after", changed)]  # reported failed, with its text
