"""A Claude Code older than the driver's known minimum keeps running, with in-run message delivery trimmed and
one execution Notice saying so; a current one gets no notice."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

from adaptor_nb import Notice
from adaptor_nb._core._version_trim import below, trimmed
from adaptor_nb.driver import Boundary, ContinueMode
from adaptor_nb.drivers.claude._driver import MESSAGES
from adaptor_nb.testing._anthropic import FakeAnthropicServer, Reply


def old_cli(tmp_path: Path, real: str, version: str) -> str:
    """A wrapper that reports ``version`` for ``--version`` and runs the real CLI otherwise."""
    path = tmp_path / "claude-old"
    path.write_text(
        f'#!/bin/sh\nif [ "$1" = "--version" ]; then echo "{version} (Claude Code)"; exit 0; fi\nexec "{real}" "$@"\n'
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def trim_notices(events: list[Any]) -> list[Notice]:
    return [e for e in events if isinstance(e, Notice) and e.metadata.get("code") == "messages.trimmed"]


def test_versions_compare_numerically() -> None:
    assert below("2.0.9", "2.1.0") and not below("2.1.197 (Claude Code)", "2.1.0") and not below("", "2.1.0")
    t = trimmed(MESSAGES)
    assert Boundary.IN_RUN not in t.boundaries and Boundary.TURN_END in t.boundaries
    assert not t.interrupt and t.continue_mode is ContinueMode.RESUME


async def test_an_old_cli_gets_one_notice_and_trimmed_messages(
    agent_factory: Any, make_config: Any, fake: FakeAnthropicServer, tmp_path: Path, claude_cli: str
) -> None:
    agent = agent_factory(make_config(command=[old_cli(tmp_path, claude_cli, "2.0.5")]))
    for _ in range(2):
        fake.enqueue(Reply.text("ok"))
        stream = agent.send("hello")
        events = [e async for e in stream.events()]
        assert (await stream.result()).text == "ok"
        notes = trim_notices(events)
        assert len(notes) == 1 and notes[0].metadata["version"] == "2.0.5"
        assert "2.1.0" in notes[0].text
    report = await agent.inspect().environment()
    assert report.version == "2.0.5" and report.messages is not None
    assert Boundary.IN_RUN not in report.messages.boundaries and not report.messages.interrupt
    assert any(c.name == "messages" and not c.ok and "trimmed" in c.detail for c in report.checks)


async def test_a_current_cli_gets_no_notice(agent_factory: Any, fake: FakeAnthropicServer) -> None:
    fake.enqueue(Reply.text("ok"))
    agent = agent_factory()
    stream = agent.send("hello")
    events = [e async for e in stream.events()]
    assert (await stream.result()).text == "ok"
    assert trim_notices(events) == []
    report = await agent.inspect().environment()
    assert report.messages == MESSAGES and not any(c.name == "messages" for c in report.checks)


def counting_cli(tmp_path: Path, real: str, answer: str) -> tuple[str, Path]:
    """A wrapper that notes each ``--version`` call in a file and answers ``answer`` (nothing when empty)."""
    calls = tmp_path / "version-calls"
    path = tmp_path / "claude-counted"
    path.write_text(
        f'#!/bin/sh\nif [ "$1" = "--version" ]; then echo x >> "{calls}"; '
        f'[ -n "{answer}" ] && echo "{answer}"; exit 0; fi\nexec "{real}" "$@"\n'
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path), calls


async def test_a_cli_that_answers_no_version_is_probed_once_per_command(
    agent_factory: Any, make_config: Any, fake: FakeAnthropicServer, tmp_path: Path, claude_cli: str
) -> None:
    command, calls = counting_cli(tmp_path, claude_cli, "")
    for _ in range(3):  # a fresh driver object each time, as a notebook that re-creates its Agent has
        agent = agent_factory(make_config(command=[command]))
        fake.enqueue(Reply.text("ok"))
        stream = agent.send("hello")
        events = [e async for e in stream.events()]
        assert (await stream.result()).text == "ok"
        assert not trim_notices(events)  # an unknown version keeps the declared support
    assert calls.read_text().splitlines() == ["x"]
