"""The real Claude Code CLI with no credentials and no reachable endpoint: the run fails saying what to set."""

from __future__ import annotations

from pathlib import Path

from adaptor_nb import Agent, AgentFailed
from adaptor_nb.driver import EnvironmentStatus
from adaptor_nb.drivers import claude
from adaptor_nb.drivers.claude._config import explain_login

from .conftest import QUIET_ENV
from .helpers import outcome

NO_CREDENTIALS = {
    "ANTHROPIC_API_KEY": "",
    "ANTHROPIC_AUTH_TOKEN": "",
    "CLAUDE_CODE_OAUTH_TOKEN": "",
    "CLAUDE_CODE_USE_BEDROCK": "",
    "CLAUDE_CODE_USE_VERTEX": "",
}


def _config(claude_cli: str, home: Path, workspace: Path) -> claude.Config:
    env = {
        **QUIET_ENV,
        **NO_CREDENTIALS,
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",  # the discard port: nothing answers there
    }
    return claude.Config(command=[claude_cli], cwd=str(workspace), env=env, startup_timeout=30.0, grace_period=1.0)


async def test_not_logged_in_names_the_credential_sources(claude_cli: str, home: Path, workspace: Path) -> None:
    agent = Agent(claude.Driver(_config(claude_cli, home, workspace)), workspace=str(workspace))
    try:
        result, err = await outcome(agent.send("hello"))
    finally:
        await agent.close()
    assert result is None and isinstance(err, AgentFailed)
    text = str(err)
    assert "ANTHROPIC_API_KEY" in text and "CLAUDE_CODE_OAUTH_TOKEN" in text and "CLAUDE_CODE_USE_BEDROCK" in text
    assert "Not logged in" in text  # the CLI's own words stay, after what to do


async def test_the_probe_reports_missing_credentials(claude_cli: str, home: Path, workspace: Path) -> None:
    report = await claude.Driver(_config(claude_cli, home, workspace)).probe_environment()
    assert report.status == EnvironmentStatus.DEGRADED and report.auth_source == ""
    (auth,) = [c for c in report.checks if c.name == "auth"]
    assert not auth.ok and "ANTHROPIC_API_KEY" in auth.detail


def test_other_failures_are_left_as_they_are() -> None:
    assert explain_login("Overloaded") == "Overloaded"
    assert explain_login("Not logged in · Please run /login").startswith("Claude Code has no credentials")


async def test_the_view_says_the_login_error_once_and_no_status_line(
    claude_cli: str, home: Path, workspace: Path
) -> None:
    from adaptor_nb._views._model import RunState

    agent = Agent(claude.Driver(_config(claude_cli, home, workspace)), workspace=str(workspace))
    state = RunState(driver="claude")
    try:
        async for event in agent.send("hello").events():
            state.apply(event)
    finally:
        await agent.close()
    shown = [i["text"] for i in state.items if i["kind"] == "notice"] + [state.header["error"]]
    assert not any(t.startswith("status:") for t in shown)
    assert sum(t.count("Not logged in") for t in shown) == 1
    assert "ANTHROPIC_API_KEY" in state.header["error"] and state.header["state"] == "failed"
