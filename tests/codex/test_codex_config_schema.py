"""``Inspector.config_schema()`` on the real Codex CLI: the config.toml schema the CLI publishes, with no model
request and nothing leaving the machine; a CLI that cannot tell it is "unavailable", never an exception."""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path

import jsonschema
from _support import NetworkTripwire

from adaptor_nb import Agent, Availability
from adaptor_nb.testing import FakeOpenAIServer

from .conftest import DriverFactory


async def test_the_cli_publishes_its_config_schema(
    make_driver: DriverFactory, fake: FakeOpenAIServer, codex_home: Path, tripwire: NetworkTripwire, tmp_path: Path
) -> None:
    async with Agent(make_driver(), workspace=str(tmp_path)) as agent:
        answer = await agent.inspect().config_schema()
    assert answer.status is Availability.AVAILABLE, answer.detail
    schema = dict(answer.schema)
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)  # a valid JSON Schema, its references resolving at the root
    assert {"model", "approval_policy", "sandbox_mode"} <= set(schema["properties"])
    check = validator(schema)
    written = tomllib.loads((codex_home / "config.toml").read_text())
    assert not list(check.iter_errors(written)), "the config the tests run Codex with must fit the CLI's own schema"
    assert not check.is_valid({"model": 5}) and not check.is_valid({"approval_policy": "sometimes"})
    assert fake.model_requests == [] and tripwire.attempts == []


async def test_a_cli_without_the_schema_command_is_unavailable(make_driver: DriverFactory, tmp_path: Path) -> None:
    fake_cli = tmp_path / "codex-old"
    fake_cli.write_text("#!/bin/sh\necho \"error: unrecognized subcommand '$2'\" >&2\nexit 2\n")
    fake_cli.chmod(fake_cli.stat().st_mode | stat.S_IXUSR)
    async with Agent(make_driver(command=[str(fake_cli)]), workspace=str(tmp_path)) as agent:
        answer = await agent.inspect().config_schema()
    assert answer.status is Availability.UNAVAILABLE and not answer.schema
    assert "generate-json-schema" in answer.detail and "unrecognized subcommand" in answer.detail
