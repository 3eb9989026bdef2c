"""A Codex older than the driver's known minimum keeps running, with in-run message delivery trimmed and one
execution Notice saying so."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

from adaptor_nb import Agent, Notice
from adaptor_nb.drivers.codex._driver import MESSAGES

from .conftest import DriverFactory


def old_cli(tmp_path: Path, real: str, version: str) -> str:
    path = tmp_path / "codex-old"
    path.write_text(
        f'#!/bin/sh\nif [ "$1" = "--version" ]; then echo "codex-cli {version}"; exit 0; fi\nexec "{real}" "$@"\n'
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


async def test_an_old_codex_gets_one_notice(
    make_driver: DriverFactory, fake: Any, tmp_path: Path, codex_bin: str, workspace: Path
) -> None:
    assert MESSAGES.min_version
    agent = Agent(make_driver(command=[old_cli(tmp_path, codex_bin, "0.1.0")]), workspace=str(workspace))
    stream = agent.send("hello")
    events = [e async for e in stream.events()]
    assert (await stream.result()).text
    notes = [e for e in events if isinstance(e, Notice) and e.metadata.get("code") == "messages.trimmed"]
    assert len(notes) == 1 and notes[0].metadata["version"] == "0.1.0"
    assert notes[0].metadata["min_version"] == MESSAGES.min_version
    await agent.close()
