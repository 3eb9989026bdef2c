"""A 20-row batch with a schema on the real Claude Code CLI against the fake Anthropic server."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import psutil
import pytest
from _support import require_cli

from adaptor_nb import Agent
from adaptor_nb.batch import map_rows
from adaptor_nb.drivers import claude
from adaptor_nb.testing._anthropic import FakeAnthropicServer

from ._rows import Ticket

pytestmark = pytest.mark.claude

QUIET_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_MAX_RETRIES": "0",
}
SECRET = "sk-ant-test-secret-0123456789abcdef"


@pytest.fixture
def fake() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


def _children() -> set[int]:
    return {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)}


def _factory(fake: FakeAnthropicServer, home: Path, workspace: Path) -> Agent:
    cli = require_cli("claude", "run `bash scripts/setup.sh` to install the pinned CLIs")
    config = claude.Config(
        command=[cli],
        cwd=str(workspace),
        env={"HOME": str(home), "ANTHROPIC_BASE_URL": fake.url, **QUIET_ENV},
        secret_env={"ANTHROPIC_API_KEY": SECRET},
        bare=True,
        startup_timeout=30.0,
        grace_period=1.0,
    )
    return Agent(claude.Driver(config), workspace=str(workspace))


def _tickets(n: int) -> pd.DataFrame:
    rows = []
    for i in range(n):
        value = {"label": "bug" if i % 2 else "feature", "priority": i % 4, "urgent": i % 3 == 0}
        reply = "[[say not json]]" if i == 7 else f"[[structured {json.dumps(value)}]]"
        rows.append({"id": i, "reply": reply})
    return pd.DataFrame(rows, index=[f"T-{i}" for i in range(n)])


async def test_twenty_rows_with_a_schema_on_the_real_cli(
    fake: FakeAnthropicServer, home: Path, workspace: Path
) -> None:
    before = _children()
    df = _tickets(20)
    out = await map_rows(
        lambda: _factory(fake, home, workspace), df, "Classify ticket {id}. {reply}", Ticket, concurrency=4,
        retries=0, progress=False,
    )  # fmt: skip
    assert list(out.index) == list(df.index)
    ok = out.drop(index="T-7")
    assert (ok["_status"] == "ok").all(), ok[ok["_status"] != "ok"]["_error"].tolist()
    assert list(ok["priority"]) == [i % 4 for i in range(20) if i != 7]
    assert list(ok["label"]) == ["bug" if i % 2 else "feature" for i in range(20) if i != 7]
    assert (ok["_input_tokens"] > 0).all() and (ok["_run_id"] != "").all()
    # the row whose model never answers in the schema fails alone, with the reason
    assert out.loc["T-7", "_status"] == "failed" and "StructuredOutput" in out.loc["T-7", "_error"]
    assert SECRET not in out.to_csv()
    assert _children() <= before
