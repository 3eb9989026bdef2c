"""Configuration errors before launch, the truthful descriptor, policy mapping, inspection and secrets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adaptor_nb import (
    Agent,
    FeatureLevel,
    InvalidDriverConfigError,
    Policy,
    PolicyCapabilityUnsupportedError,
    ProcessInfo,
    ProcessKind,
    SandboxLevel,
    ToolResult,
)
from adaptor_nb.drivers import claude
from adaptor_nb.testing._anthropic import FakeAnthropicServer

from .conftest import SECRET
from .helpers import drain, of


@pytest.mark.parametrize(
    ("fields", "option"),
    [
        ({"effort": "extreme"}, "effort"),
        ({"max_turns_per_run": -1}, "max_turns_per_run"),
        ({"permission_mode": "bypassPermissions"}, "permission_mode"),
        ({"extra_args": ["--resume", "x"]}, "extra_args"),
        ({"allowed_tools": [""]}, "allowed_tools"),
        ({"grace_period": 0}, "grace_period"),
        ({"cwd": "/does/not/exist"}, "cwd"),
    ],
)
async def test_bad_config_fails_before_any_process(fields, option, tmp_path: Path) -> None:
    driver = claude.Driver(claude.Config(command=["/bin/true"], **fields))
    with pytest.raises(InvalidDriverConfigError) as info:
        driver.validate_config()
    assert info.value.option == option and f"claude.Config.{option}" in str(info.value)
    async with Agent(driver, workspace=str(tmp_path)) as agent:
        events, _result, err = await drain(agent.send("x"))
    assert isinstance(err, InvalidDriverConfigError)
    assert not [p for p in of(events, ProcessInfo) if p.kind is ProcessKind.SPAWN]


async def test_a_working_directory_gone_after_validation_fails_the_run_naming_it(tmp_path: Path) -> None:
    gone = tmp_path / "work"
    gone.mkdir()

    class Vanishing(claude.Driver):
        async def run(self, invocation, ctx):  # type: ignore[no-untyped-def]
            gone.rmdir()  # after the engine validated the configuration, before the driver launches
            return await super().run(invocation, ctx)

    async with Agent(Vanishing(claude.Config(command=["/bin/true"], cwd=str(gone)))) as agent:
        events, _result, err = await drain(agent.send("x"))
    assert isinstance(err, InvalidDriverConfigError) and err.option == "cwd", err
    assert "claude.Config.cwd" in str(err)
    assert not [p for p in of(events, ProcessInfo) if p.kind is ProcessKind.SPAWN]


async def test_a_missing_cli_names_the_command_and_how_to_install(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(InvalidDriverConfigError) as info:
        claude.Driver().validate_config()
    assert "'claude'" in str(info.value) and "npm install @anthropic-ai/claude-code" in str(info.value)
    with pytest.raises(InvalidDriverConfigError) as info:
        claude.Driver(claude.Config(command=["claude-nowhere"])).validate_config()
    assert "'claude-nowhere'" in str(info.value)
    report = await claude.Driver().probe_environment()
    assert report.status == "missing" and "npm install" in report.checks[0].detail


def test_the_cli_is_found_again_after_it_is_removed_or_installed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(InvalidDriverConfigError):
        claude.Driver().validate_config()
    cli = tmp_path / "claude"
    cli.write_text("#!/bin/sh\n")
    cli.chmod(0o755)
    claude.Driver().validate_config()  # installed since the last search, on the same PATH
    cli.unlink()
    with pytest.raises(InvalidDriverConfigError):
        claude.Driver().validate_config()  # a remembered hit is checked before it is used
    cli.mkdir()
    with pytest.raises(InvalidDriverConfigError):
        claude.Driver().validate_config()


def test_the_descriptor_is_truthful() -> None:
    d = claude.Driver().descriptor()
    assert d.name == "claude" and d.provider == "anthropic"
    assert d.persistent and d.resume and d.fork
    assert d.structured_output.native
    assert d.messages.interrupt and d.messages.confirmed_delivery
    assert {b.value for b in d.messages.boundaries} == {"in_run", "turn_end"}
    assert d.policy.sandbox == {SandboxLevel.READ_ONLY}
    assert d.policy.web_search == {FeatureLevel.ALLOW, FeatureLevel.DENY}
    assert d.policy.browser == frozenset()


@pytest.mark.parametrize(
    "policy",
    [
        Policy(sandbox=SandboxLevel.WORKSPACE_WRITE),
        Policy(sandbox=SandboxLevel.UNRESTRICTED),
        Policy(browser=FeatureLevel.DENY),
    ],
)
async def test_unsupported_policy_values_are_rejected_before_launch(policy, tmp_path: Path) -> None:
    async with Agent(claude.Driver(claude.Config(command=["/bin/true"])), workspace=str(tmp_path)) as agent:
        _events, _result, err = await drain(agent.send("x", policy=policy))
    assert isinstance(err, PolicyCapabilityUnsupportedError)


@pytest.mark.claude
async def test_read_only_offers_no_writing_tool(agent_factory, fake: FakeAnthropicServer, workspace: Path) -> None:
    target = workspace / "w.txt"
    write = json.dumps({"file_path": str(target), "content": "x"})
    agent = agent_factory(policy=Policy(sandbox=SandboxLevel.READ_ONLY), on_approval=lambda r: r.approve())
    events, _result, err = await drain(agent.send(f"write [[tool Write {write}]]"))
    assert err is None
    assert not target.exists()
    assert of(events, ToolResult)[0].is_error
    tools = set(fake.message_requests[0].tool_names)
    assert tools and tools <= {"Read", "Glob", "Grep", "WebFetch", "WebSearch", "AskUserQuestion"}


@pytest.mark.claude
@pytest.mark.parametrize(("level", "offered"), [(FeatureLevel.DENY, False), (FeatureLevel.ALLOW, True)])
async def test_web_search_policy_keeps_or_removes_the_tool(agent_factory, make_config, fake, level, offered) -> None:
    agent = agent_factory(make_config(bare=False), policy=Policy(web_search=level))
    await agent.send("hi [[say hi]]").result()
    assert ("WebSearch" in fake.message_requests[0].tool_names) is offered


@pytest.mark.claude
async def test_environment_probe_and_models_start_no_model_task(make_config, fake: FakeAnthropicServer) -> None:
    driver = claude.Driver(make_config())
    report = await driver.probe_environment()
    assert report.status == "ok" and report.version == "2.1.197"
    assert report.auth_source == "ANTHROPIC_API_KEY"
    assert report.messages is not None and report.messages.interrupt
    models = await driver.list_models()
    assert models and any(m.default for m in models)
    assert fake.message_requests == []


@pytest.mark.claude
async def test_secrets_never_reach_events_transcripts_or_reprs(agent_factory, make_config, fake) -> None:
    cfg = make_config()
    agent = agent_factory(cfg)
    events, result, err = await drain(agent.send("who am i [[say nobody]]"))
    assert err is None and result is not None
    blobs = [repr(e) for e in events]
    blobs += [repr(i) for i in result.transcript()]
    blobs += [result.raw().stdout.decode(), result.raw().stderr.decode(), repr(result), repr(cfg), repr(agent.driver)]
    blobs += [json.dumps(e.data, default=str) for e in of(events, ProcessInfo)]
    assert not [b for b in blobs if SECRET in b]
    assert fake.message_requests[0].headers["x-api-key"] == SECRET  # it really reached the CLI
