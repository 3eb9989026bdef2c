"""A plain run on the real Codex CLI: streamed text and reasoning, usage, request settings, raw capture, secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaptor_nb import Agent, Notice, ProcessInfo, ProcessKind, TextDelta, Thinking, TurnEnd
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._openai import Reply

from .conftest import API_KEY, CATALOG_MODEL, DriverFactory
from .helpers import alive, of, run_all, spawned_pids

pytestmark = pytest.mark.codex


async def test_text_and_reasoning_stream_in_order_and_the_result_carries_usage(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(Reply.text("hello from the fake model", reasoning="thinking it over", usage=(30, 7, 4)))
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        events, result, error = await run_all(agent.send("say hello"))
    assert error is None and result is not None
    assert result.text == "hello from the fake model"
    assert result.turns == 1
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.cached_input_tokens) == (30, 7, 4)
    assert (result.model, result.provider) == ("gpt-fake", "fake")
    thinking = "".join(e.text for e in of(events, Thinking))
    text = "".join(e.text for e in of(events, TextDelta))
    assert (thinking, text) == ("thinking it over", "hello from the fake model")
    order = [type(e).__name__ for e in events if isinstance(e, Thinking | TextDelta | TurnEnd | ProcessInfo)]
    assert order[0] == "ProcessInfo"
    assert order.index("Thinking") < order.index("TextDelta") < order.index("TurnEnd")
    assert [e.turn for e in of(events, TurnEnd)] == [1]
    assert fake.model_requests[0].prompt == "say hello"


async def test_model_effort_and_fast_mode_reach_the_model_request(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    driver = make_driver(model=CATALOG_MODEL, reasoning_effort="high", fast_mode=True)
    async with Agent(driver, workspace=str(workspace)) as agent:
        result = await agent.send("hi").result()
    body = fake.model_requests[0].body
    assert body["model"] == CATALOG_MODEL
    assert body["reasoning"]["effort"] == "high"
    assert body["service_tier"] == "priority"
    assert result.model == CATALOG_MODEL


async def test_a_per_call_model_wins_over_the_config_model(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(model="gpt-config"), workspace=str(workspace)) as agent:
        await agent.send("hi", model="gpt-call").result()
    assert fake.model_requests[0].model == "gpt-call"


async def test_instructions_reach_the_model_as_developer_text(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    driver = make_driver(instructions="CONFIG-MARKER be brief")
    async with Agent(driver, workspace=str(workspace), instructions="RUN-MARKER answer in French") as agent:
        await agent.send("hi").result()
    developer = "\n".join(fake.model_requests[0].texts("developer"))
    assert "CONFIG-MARKER be brief" in developer
    assert "RUN-MARKER answer in French" in developer


async def test_raw_output_transcript_and_warnings_are_kept_and_the_secret_is_not(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    driver = make_driver()
    async with Agent(driver, workspace=str(workspace)) as agent:
        events, result, _ = await run_all(agent.send("hi [[say fine]]"))
    assert result is not None
    raw = result.raw()
    assert b'"method":"turn/completed"' in raw.stdout
    assert raw.terminal is not None and raw.terminal.event == "turn/completed"
    assert raw.terminal.json["status"] == "completed"
    assert [i.kind for i in result.transcript()] == ["text"]
    warnings = [n for n in of(events, Notice) if n.metadata.get("code") == "codex_warning"]
    assert any("gpt-fake" in n.text for n in warnings)  # the unknown-model warning Codex sends every turn
    everything = repr(events) + repr(result) + repr(result.transcript()) + repr(driver) + repr(driver.config)
    assert API_KEY not in everything
    assert API_KEY.encode() not in raw.stdout + raw.stderr
    assert fake.model_requests[0].has_auth


async def test_a_direct_send_runs_a_fresh_process_that_is_gone_afterwards(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        first, _, _ = await run_all(agent.send("one"))
        second, _, _ = await run_all(agent.send("two"))
        pids = spawned_pids(first) + spawned_pids(second)
        assert len(set(pids)) == 2
        assert not any(alive(pid) for pid in pids)
    exits = [e.data for e in of(first, ProcessInfo) if e.kind is ProcessKind.EXIT]
    assert exits == [{"returncode": 0, "pid": pids[0]}]
    stderr = "".join(e.text for e in of(first, ProcessInfo) if e.kind is ProcessKind.STDERR)
    assert "bubblewrap" in stderr  # Codex warns on stderr that it uses its bundled sandbox helper
    # A direct send uses an ephemeral Codex thread: nothing is written under CODEX_HOME/sessions.
    assert not list((Path(make_driver().config.codex_home or "") / "sessions").rglob("*.jsonl"))
