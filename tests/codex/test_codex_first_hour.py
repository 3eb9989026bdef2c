"""The real Codex CLI against an endpoint that does not answer: the run ends with a RunError that says so."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from adaptor_nb import Agent, AgentFailed, InvalidDriverConfigError, Notice
from adaptor_nb.drivers.codex import Config
from adaptor_nb.drivers.codex._home import provider_settings, write_codex_home

from .conftest import API_KEY_ENV, DriverFactory


def _closed_port() -> int:
    """A local port nothing listens on (bound, then released), so every connection is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_a_turn_that_keeps_reconnecting_fails_naming_the_cause(
    make_driver: DriverFactory, tmp_path: Path, workspace: Path
) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    home = write_codex_home(tmp_path / "codex-home", provider_settings(base_url=url, env_key=API_KEY_ENV))
    agent = Agent(make_driver(codex_home=str(home), connect_timeout=2.0), workspace=str(workspace))
    try:
        stream = agent.send("hello")
        events = [event async for event in stream.events()]
        with pytest.raises(AgentFailed) as failed:
            await stream.result()
    finally:
        await agent.close()
    retries = [e for e in events if isinstance(e, Notice) and e.metadata.get("code") == "codex_retry"]
    assert retries, "Codex never reported a reconnect, so the bound was not what ended the run"
    text = str(failed.value)
    assert "could not reach the model endpoint" in text and "kept reconnecting for 2 s" in text
    assert "OPENAI_API_KEY" in text and "connect_timeout" in text
    assert failed.value.result is not None  # the partial result travels with the error


def test_connect_timeout_is_checked_before_anything_starts() -> None:
    with pytest.raises(InvalidDriverConfigError, match="connect_timeout"):
        Config(connect_timeout=0).validate()
    with pytest.raises(InvalidDriverConfigError, match="connect_timeout"):
        Config(connect_timeout=True).validate()  # type: ignore[arg-type]
