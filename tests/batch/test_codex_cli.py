"""A 20-row batch with a schema on the real Codex CLI against the fake OpenAI server."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pandas as pd
import psutil
import pytest
from _support import require_cli

from adaptor_nb import Agent
from adaptor_nb.batch import map_rows
from adaptor_nb.drivers.codex import Config, Driver
from adaptor_nb.drivers.codex._home import provider_settings, write_codex_home
from adaptor_nb.testing import FakeOpenAIServer

from ._rows import Ticket

pytestmark = pytest.mark.codex

API_KEY_ENV = "FAKE_OPENAI_API_KEY"
API_KEY = "sk-test-codex-secret-5f1e"


@pytest.fixture
async def fake() -> AsyncIterator[Any]:
    async with FakeOpenAIServer() as server:
        yield server


def _children() -> set[int]:
    return {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)}


async def test_twenty_rows_with_a_schema_on_the_real_codex_cli(
    fake: FakeOpenAIServer, tmp_path: Path, home: Path, workspace: Path
) -> None:
    cli = require_cli("codex", "run scripts/setup.sh to put @openai/codex in .cache/npm")
    settings = provider_settings(
        base_url=fake.base_url, model="gpt-fake", env_key=API_KEY_ENV, request_max_retries=0, stream_max_retries=0
    )
    codex_home = write_codex_home(tmp_path / "codex-home", settings)

    def factory() -> Agent:
        config = Config(
            command=[cli],
            codex_home=str(codex_home),
            env={"HOME": str(home)},
            secret_env={API_KEY_ENV: API_KEY},
            grace_period=1.0,
        )
        return Agent(Driver(config), workspace=str(workspace))

    rows = []
    for i in range(20):
        value = {"label": "bug" if i % 2 else "feature", "priority": i % 4, "urgent": i % 3 == 0}
        rows.append({"id": i, "reply": '[[json {"label": 5}]]' if i == 3 else f"[[json {json.dumps(value)}]]"})
    df = pd.DataFrame(rows, index=[f"T-{i}" for i in range(20)])
    before = _children()
    out = await map_rows(factory, df, "Classify ticket {id}. {reply}", Ticket, concurrency=4, retries=0, progress=False)
    ok = out.drop(index="T-3")
    assert (ok["_status"] == "ok").all(), ok[ok["_status"] != "ok"]["_error"].tolist()
    assert list(ok["priority"]) == [i % 4 for i in range(20) if i != 3]
    assert list(ok["urgent"]) == [i % 3 == 0 for i in range(20) if i != 3]
    assert out.loc["T-3", "_status"] == "failed" and "priority" in out.loc["T-3", "_error"]
    assert API_KEY not in out.to_csv()
    assert _children() <= before
