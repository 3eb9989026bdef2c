"""Direct sends replay by what they ask, so sends that start in another order than they were recorded (concurrent
ones, `map_rows` with concurrency above 1) each get their own recording; on the real Claude CLI."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd
import pytest
from _support import drain, require_cli

from adaptor_nb import Agent, map_rows
from adaptor_nb.cassette import Cassette
from adaptor_nb.drivers import claude
from adaptor_nb.testing import FakeAnthropicServer

from .test_claude_cassette import _config

ROWS = ["alpha", "beta", "gamma"]


def _prompt(word: str) -> str:
    return f"Say the word. [[say the word is {word}]]"


@pytest.fixture
def cli() -> str:
    return require_cli("claude", "run `bash scripts/setup.sh`")


async def _sends(config: claude.Config, workspace: Path, words: list[str], *, together: bool) -> dict[str, str]:
    agent = Agent(claude.Driver(config), workspace=str(workspace), on_approval=None)
    try:
        if together:
            outs = await asyncio.gather(*(drain(agent.send(_prompt(w))) for w in words))
        else:
            outs = [await drain(agent.send(_prompt(w))) for w in words]
    finally:
        await agent.close()
    texts: dict[str, str] = {}
    for word, (_, result, error) in zip(words, outs, strict=True):
        assert error is None, f"{word}: {error}"
        assert result is not None
        texts[word] = result.text
    return texts


async def test_direct_sends_replay_in_any_order_and_concurrently(
    cli: str, tmp_path: Path, home: Path, workspace: Path
) -> None:
    tape = tmp_path / "sends.jsonl"
    with FakeAnthropicServer() as fake, Cassette(tape, mode="rewrite") as rec:
        live = await _sends(_config([cli], home, workspace, fake.url), workspace, ROWS, together=False)
        url = fake.url
    assert rec.recorded == 3 and live == {w: f"the word is {w}" for w in ROWS}
    missing = str(tmp_path / "no-such-dir" / "claude")
    offline = _config([missing], home, workspace, url)

    with Cassette(tape, mode="none") as play:  # the reverse of the recorded order
        assert await _sends(offline, workspace, list(reversed(ROWS)), together=False) == live
    assert play.replayed == 3

    with Cassette(tape, mode="none") as play:  # all at once
        assert await _sends(offline, workspace, ROWS, together=True) == live
    assert play.replayed == 3


async def test_map_rows_with_concurrency_replays_each_row(
    cli: str, tmp_path: Path, home: Path, workspace: Path
) -> None:
    frame = pd.DataFrame({"word": ROWS})
    tape = tmp_path / "rows.jsonl"
    with FakeAnthropicServer() as fake, Cassette(tape, mode="rewrite"):
        agent = Agent(claude.Driver(_config([cli], home, workspace, fake.url)), workspace=str(workspace))
        try:
            live = await map_rows(
                agent, frame, "Say the word. [[say the word is {word}]]", concurrency=1, progress=False
            )
        finally:
            await agent.close()
        url = fake.url
    offline = _config([str(tmp_path / "no-such-dir" / "claude")], home, workspace, url)
    with Cassette(tape, mode="none") as play:
        agent = Agent(claude.Driver(offline), workspace=str(workspace))
        try:
            replayed = await map_rows(
                agent, frame.iloc[::-1], "Say the word. [[say the word is {word}]]", concurrency=3, progress=False
            )
        finally:
            await agent.close()
    assert play.replayed == 3
    assert list(replayed.sort_index()["text"]) == list(live.sort_index()["text"]) == [f"the word is {w}" for w in ROWS]
