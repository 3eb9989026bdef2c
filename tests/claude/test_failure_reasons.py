"""Why a Claude run failed, typed: a CLI that dies is ``infrastructure``; a model API error stays ``agent_error``."""

from __future__ import annotations

import sys

import pytest

from adaptor_nb import AgentFailed, FailureReason
from adaptor_nb.testing._anthropic import FakeAnthropicServer, Reply

from .conftest import FAULT_CLI
from .helpers import drain

pytestmark = pytest.mark.claude


async def test_a_cli_that_exits_without_a_result_is_an_infrastructure_failure(
    agent_factory, make_config, claude_cli
) -> None:
    agent = agent_factory(make_config(command=[sys.executable, FAULT_CLI, "exit", claude_cli]))
    _events, result, err = await drain(agent.send("hello"))
    assert result is None and isinstance(err, AgentFailed)
    assert err.reason is FailureReason.INFRASTRUCTURE and str(err).startswith("infrastructure: ")
    assert err.cause is not None and err.details["exit_code"] == 3


async def test_an_error_the_model_api_returns_stays_an_agent_error(agent_factory, fake: FakeAnthropicServer) -> None:
    fake.enqueue(Reply.error(400, "bad request from the fake"))
    _events, result, err = await drain(agent_factory().send("hello"))
    assert result is None and isinstance(err, AgentFailed)
    assert err.reason is FailureReason.AGENT_ERROR
