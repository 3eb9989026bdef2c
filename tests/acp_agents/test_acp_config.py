"""ACP driver configuration: presets, a missing agent binary, and the SDK kept out of ``import adaptor_nb``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from adaptor_nb import Agent, InvalidDriverConfigError
from adaptor_nb.drivers import acp


def test_every_preset_names_its_argv_credential_and_install() -> None:
    assert set(acp.PRESETS) == {
        "qwen",
        "codex",
        "codebuddy",
        "gemini",
        "opencode",
        "goose",
        "claude",
        "copilot",
        "cursor",
    }
    for name, known in acp.PRESETS.items():
        config = acp.preset(name)
        assert config.command == list(known.argv) and config.name == name
        assert known.auth_envs and known.install and config.install_hint == known.install


def test_an_unknown_preset_is_refused_by_name() -> None:
    with pytest.raises(InvalidDriverConfigError, match="unknown agent 'nope'"):
        acp.preset("nope")


async def test_a_missing_agent_binary_fails_before_launch_with_its_install_hint() -> None:
    driver = acp.Driver(acp.preset("gemini", command=["no-such-acp-agent-4d1"]))
    async with Agent(driver) as agent:
        with pytest.raises(InvalidDriverConfigError, match="npm install -g @google/gemini-cli"):
            await agent.send("hi").result()


def test_importing_the_package_and_the_driver_does_not_import_the_sdk() -> None:
    code = "import sys, adaptor_nb; from adaptor_nb.drivers import acp; print('acp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_interrupt_is_declared_except_for_agents_measured_without_it() -> None:
    assert acp.Driver(acp.preset("qwen")).descriptor().messages.interrupt
    assert acp.Driver(acp.preset("codex")).descriptor().messages.interrupt
    assert not acp.Driver(acp.preset("codebuddy")).descriptor().messages.interrupt
    assert not acp.Driver(acp.preset("qwen", interrupt=False)).descriptor().messages.interrupt
