"""Configuration, validation before launch, the truthful descriptor, the config builder and inspection."""

from __future__ import annotations

import os
import platform
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from adaptor_nb import (
    APPROVALS_AUTO_DENY,
    Agent,
    ApprovalKind,
    ApprovalMode,
    ApprovalPolicy,
    FeatureLevel,
    HumanDecisionModeUnsupportedError,
    InvalidDriverConfigError,
    Policy,
    PolicyCapabilityUnsupportedError,
    QuestionMode,
    SandboxLevel,
)
from adaptor_nb.driver import Boundary, ContinueMode
from adaptor_nb.drivers.codex import Config, Driver
from adaptor_nb.drivers.codex._command import native_binary
from adaptor_nb.drivers.codex._home import (
    OFFLINE_SETTINGS,
    config_overrides,
    provider_settings,
    toml_document,
    write_codex_home,
)

from .helpers import run_all


@pytest.mark.parametrize(
    ("fields", "option", "words"),
    [
        ({"reasoning_effort": "extreme"}, "reasoning_effort", "one of"),
        ({"fast_mode": "yes"}, "fast_mode", "True or False"),
        ({"codex_home": "/no/such/dir"}, "codex_home", "not an existing directory"),
        ({"config": {"x": object()}}, "config", "not a TOML value"),
        ({"config": {"": 1}}, "config", "non-empty"),
        ({"client_name": "has spaces"}, "client_name", "letters"),
        ({"extra_args": ["--listen", "ws://127.0.0.1:1"]}, "extra_args", "managed by the driver"),
        ({"model": " gpt "}, "model", "surrounding spaces"),
        ({"startup_timeout": 0}, "startup_timeout", "positive"),
        ({"command": ["/no/such/codex"]}, "command", "not an executable"),
    ],
)
def test_bad_config_is_rejected_naming_the_field(fields: dict[str, Any], option: str, words: str) -> None:
    driver = Driver(Config(**{"command": ["/bin/true"], **fields}))
    with pytest.raises(InvalidDriverConfigError) as caught:
        driver.validate_config()
    assert caught.value.option == option
    assert words in str(caught.value)


def test_a_missing_codex_on_path_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(InvalidDriverConfigError, match="npm install -g @openai/codex"):
        Driver().validate_config()


async def test_a_bad_config_fails_the_run_before_any_process_starts(tmp_path: Path) -> None:
    async with Agent(Driver(Config(command=["/bin/true"], reasoning_effort="extreme")), workspace=str(tmp_path)) as a:
        events, _, error = await run_all(a.send("hi"))
    assert isinstance(error, InvalidDriverConfigError)
    assert error.option == "reasoning_effort"
    assert not [e for e in events if type(e).__name__ == "ProcessInfo"]


@pytest.mark.parametrize(
    ("policy", "error", "option"),
    [
        (Policy(browser=FeatureLevel.ALLOW), PolicyCapabilityUnsupportedError, "policy.browser"),
        (Policy(approvals=ApprovalPolicy(plan_review=ApprovalMode.ASK)), HumanDecisionModeUnsupportedError,
         "policy.approvals.plan_review"),
        (Policy(approvals=ApprovalPolicy(question=QuestionMode.ASK)), HumanDecisionModeUnsupportedError,
         "policy.approvals.question"),
        (Policy(approvals=APPROVALS_AUTO_DENY), HumanDecisionModeUnsupportedError, "policy.approvals.plan_review"),
    ],
)  # fmt: skip
async def test_explicit_unsupported_policy_values_are_rejected_before_launch(
    policy: Policy, error: type[Exception], option: str, tmp_path: Path
) -> None:
    async with Agent(Driver(Config(command=["/bin/true"])), workspace=str(tmp_path), policy=policy) as agent:
        events, _, got = await run_all(agent.send("hi"))
    assert isinstance(got, error)
    assert getattr(got, "option", "") == option
    assert not [e for e in events if type(e).__name__ == "ProcessInfo"]


def test_the_descriptor_declares_what_the_driver_does() -> None:
    d = Driver().descriptor()
    assert (d.name, d.provider, d.resume, d.fork, d.persistent, d.scripted) == (
        "codex",
        "openai",
        True,
        True,
        True,
        False,
    )
    assert d.messages.boundaries == {Boundary.IN_RUN, Boundary.TURN_END}
    assert d.messages.interrupt and d.messages.confirmed_delivery
    assert d.messages.continue_mode is ContinueMode.IN_RUN
    assert d.approvals.kinds == {ApprovalKind.PERMISSION}
    assert d.approvals.permission_modes == {ApprovalMode.ASK, ApprovalMode.AUTO_APPROVE, ApprovalMode.AUTO_DENY}
    assert d.approvals.plan_review_modes == frozenset()
    assert d.approvals.question_modes == {QuestionMode.AUTO_DENY}
    assert not d.approvals.retry
    assert d.policy.sandbox == {SandboxLevel.READ_ONLY, SandboxLevel.WORKSPACE_WRITE, SandboxLevel.UNRESTRICTED}
    assert d.policy.web_search == {FeatureLevel.ALLOW, FeatureLevel.DENY}
    assert d.policy.browser == frozenset()
    assert d.structured_output.native


def test_keyword_fields_build_the_config_and_the_repr_hides_secrets() -> None:
    driver = Driver(model="gpt-5.5", secret_env={"OPENAI_API_KEY": "sk-very-secret"})
    assert driver.config.model == "gpt-5.5"
    assert "sk-very-secret" not in repr(driver) + repr(driver.config)


def test_the_fingerprint_changes_with_what_makes_a_session_incompatible(tmp_path: Path) -> None:
    base = Driver(Config(command=["/bin/true"]))
    assert base.config_fingerprint() == Driver(Config(command=["/bin/true"])).config_fingerprint()
    assert (
        base.config_fingerprint()
        != Driver(Config(command=["/bin/true"], codex_home=str(tmp_path))).config_fingerprint()
    )
    assert base.config_fingerprint() != Driver(Config(command=["/bin/true"], config={"a": 1})).config_fingerprint()
    assert base.config_fingerprint() == Driver(Config(command=["/bin/true"], fast_mode=True)).config_fingerprint()


def test_the_config_builder_writes_valid_offline_toml(tmp_path: Path) -> None:
    settings = provider_settings(base_url="http://127.0.0.1:9/v1", model="m", request_max_retries=0)
    settings["tools"] = {"update_plan": {"enabled": True}}
    settings["weird key"] = 'quote " and \\ backslash'
    home = write_codex_home(tmp_path / "home", settings)
    parsed = tomllib.loads((home / "config.toml").read_text())
    assert parsed["model"] == "m" and parsed["model_provider"] == "fake"
    assert parsed["model_providers"]["fake"] == {
        "name": "fake",
        "base_url": "http://127.0.0.1:9/v1",
        "wire_api": "responses",
        "env_key": "FAKE_OPENAI_API_KEY",
        "request_max_retries": 0,
    }
    assert parsed["weird key"] == 'quote " and \\ backslash'
    for table, values in OFFLINE_SETTINGS.items():
        assert parsed[table] == values
    assert tomllib.loads(toml_document({"a": {"b": {"c": [1, "x", True]}}})) == {"a": {"b": {"c": [1, "x", True]}}}


def test_config_overrides_flatten_to_dotted_keys() -> None:
    args = config_overrides({"tools": {"update_plan": {"enabled": True}}, "web_search": "live", "list": [1, 2]})
    assert args == ["-c", "tools.update_plan.enabled=true", "-c", 'web_search="live"', "-c", "list=[1, 2]"]


def test_the_npm_launcher_is_resolved_to_the_native_binary(tmp_path: Path) -> None:
    modules = tmp_path / "node_modules"
    launcher = modules / "@openai" / "codex" / "bin" / "codex.js"
    native = modules / "@openai" / "codex-linux-x64" / "vendor" / "x86_64-unknown-linux-musl" / "bin" / "codex"
    for path in (launcher, native):
        path.parent.mkdir(parents=True)
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
    (modules / ".bin").mkdir()
    os.symlink("../@openai/codex/bin/codex.js", modules / ".bin" / "codex")
    if (sys.platform, platform.machine()) == ("linux", "x86_64"):
        assert native_binary(str(modules / ".bin" / "codex")) == str(native)
    assert native_binary(str(native)) == str(native)
    assert native_binary("/bin/true") == "/bin/true"


@pytest.mark.codex
async def test_inspection_reports_the_version_and_the_models(codex_bin: str, codex_home: Path) -> None:
    driver = Driver(Config(command=[codex_bin], codex_home=str(codex_home)))
    report = await driver.probe_environment()
    assert report.status == "ok"
    assert report.version == "0.171.0"
    assert report.messages is not None and Boundary.IN_RUN in report.messages.boundaries
    models = await driver.list_models()
    assert "gpt-5.5" in [m.id for m in models]


async def test_inspection_of_a_missing_cli_says_unavailable() -> None:
    report = await Driver(Config(command=["/no/such/codex"])).probe_environment()
    assert report.status == "unavailable"
    assert not report.checks[0].ok
