"""CodeBuddy configuration: invalid fields fail before any process starts, naming the field; a missing CLI says how
to install it; the probe and model list need no model request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adaptor_nb import ConfigError
from adaptor_nb.driver import EnvironmentStatus
from adaptor_nb.drivers import codebuddy
from adaptor_nb.testing import FakeChatCompletionsServer

from .conftest import API_KEY, DriverFactory


@pytest.mark.parametrize(
    ("fields", "option"),
    [
        ({"effort": "huge"}, "effort"),
        ({"permission_mode": "bypassPermissions"}, "permission_mode"),
        ({"max_turns_per_run": -1}, "max_turns_per_run"),
        ({"model": " padded "}, "model"),
        ({"extra_args": ["--resume"]}, "extra_args"),
        ({"allowed_tools": [""]}, "allowed_tools"),
    ],
)
async def test_an_invalid_field_fails_before_launch_naming_it(
    fields: dict[str, Any], option: str, workspace: Path
) -> None:
    driver = codebuddy.Driver(codebuddy.Config(command=["/nonexistent/never-started"], **fields))
    with pytest.raises(ConfigError) as info:
        driver.validate_config()
    assert info.value.option == option and f"codebuddy.Config.{option}" in str(info.value)


def test_a_missing_cli_names_the_extra_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CODEBUDDY_CODE_PATH", str(tmp_path / "absent"))
    with pytest.raises(ConfigError) as info:
        codebuddy.Driver().validate_config()
    assert "adaptor_nb[codebuddy]" in str(info.value) and info.value.option == "command"


def test_the_repr_hides_secrets() -> None:
    driver = codebuddy.Driver(codebuddy.Config(secret_env={"CODEBUDDY_API_KEY": API_KEY}, model="m"))
    assert API_KEY not in repr(driver) + repr(driver.config)


@pytest.mark.codebuddy
async def test_probe_and_models_need_no_model_request(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    driver = make_driver(cwd=str(workspace))
    report = await driver.probe_environment()
    assert report.status is EnvironmentStatus.OK and report.version == "2.163.0"
    assert report.auth_source == "CODEBUDDY_API_KEY"
    models = await driver.list_models()
    assert "default-model" in [m.id for m in models] and [m.id for m in models if m.default] == ["default-model"]
    assert fake.model_requests == []
