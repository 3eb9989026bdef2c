"""A plain run on the real CLI: events, transcript, raw output, usage and the result."""

from __future__ import annotations

import json

import pytest

from adaptor_nb import (
    Done,
    Notice,
    Phase,
    ProcessInfo,
    ProcessKind,
    RunStarted,
    SubagentKind,
    SubagentUpdate,
    TextDelta,
    Thinking,
    TurnEnd,
)
from adaptor_nb.testing._anthropic import FakeAnthropicServer, Reply

from .helpers import drain, of

pytestmark = pytest.mark.claude


async def test_text_and_thinking_stream_with_start_content_end(agent_factory, fake: FakeAnthropicServer) -> None:
    agent = agent_factory()
    events, result, err = await drain(agent.send("hello [[think let me see]] [[say hi there]]"))
    assert err is None and result is not None
    assert result.text == "hi there"
    thinking = of(events, Thinking)
    assert next(t.phase for t in thinking) is Phase.START and thinking[-1].phase is Phase.END
    assert "".join(t.text for t in thinking) == "let me see"
    text = of(events, TextDelta)
    assert text[0].phase is Phase.START and text[-1].phase is Phase.END
    assert "".join(t.text for t in text) == "hi there"
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], Done)
    assert len(of(events, TurnEnd)) == 1
    spawn = [p for p in of(events, ProcessInfo) if p.kind is ProcessKind.SPAWN]
    assert len(spawn) == 1 and spawn[0].data["pid"] > 0
    init = [n for n in of(events, Notice) if n.metadata.get("code") == "claude.init"]
    assert init and init[0].metadata["session_id"]


async def test_result_carries_model_provider_turns_usage_and_cost(agent_factory, fake: FakeAnthropicServer) -> None:
    fake.enqueue(Reply.text("costly", input_tokens=200_000, output_tokens=1000, cache_read_tokens=50_000))
    result = await agent_factory().send("spend").result()
    assert result.text == "costly"
    assert result.provider == "anthropic"
    assert result.model == "claude-opus-4-8"
    assert result.turns == 1
    assert result.usage is not None
    assert result.usage.input_tokens == 250_000
    assert result.usage.cached_input_tokens == 50_000
    assert result.usage.output_tokens == 1000
    terminal = result.raw().terminal
    assert terminal is not None and terminal.event == "result"
    expected = terminal.json["total_cost_usd"]
    assert expected > 0
    assert result.usage.estimated_cost_milli == round(expected * 1000)
    assert float(result.metadata["cost_usd"]) == pytest.approx(expected, rel=1e-6)


async def test_raw_holds_all_stdout_and_the_result_frame(agent_factory) -> None:
    result = await agent_factory().send("raw please [[say raw]]").result()
    raw = result.raw()
    lines = [json.loads(line) for line in raw.stdout.splitlines() if line.strip()]
    assert lines[-1]["type"] == "result"
    assert any(m["type"] == "system" and m.get("subtype") == "init" for m in lines)
    assert raw.terminal is not None and raw.terminal.json == lines[-1]


async def test_transcript_mirrors_the_events(agent_factory, workspace) -> None:
    (workspace / "notes.txt").write_text("hello notes\n")
    path = str(workspace / "notes.txt")
    result = await agent_factory().send(f't [[tool Read {{"file_path": "{path}"}}]] [[say read it]]').result()
    kinds = [item.kind for item in result.transcript()]
    assert kinds[0] == "init"
    assert "tool_use" in kinds and "tool_result" in kinds
    assert kinds[-2:] == ["text", "result"]
    tool_use = next(i for i in result.transcript() if i.kind == "tool_use")
    assert tool_use.tool_name == "Read" and tool_use.input == {"file_path": path}
    tool_result = next(i for i in result.transcript() if i.kind == "tool_result")
    assert "hello notes" in tool_result.text and not tool_result.is_error
    final = result.transcript()[-1]
    assert final.subtype == "success" and final.session_id and final.usage is not None


async def test_a_subagent_reports_its_progress(agent_factory, make_config, fake: FakeAnthropicServer) -> None:
    task = {"description": "look around", "prompt": "sub task [[say sub done]]", "subagent_type": "general-purpose"}
    agent = agent_factory(make_config(bare=False))
    events, result, err = await drain(agent.send(f"delegate [[tool Agent {json.dumps(task)}]] [[say main done]]"))
    assert err is None and result is not None and result.text == "main done"
    updates = of(events, SubagentUpdate)
    assert updates[0].kind is SubagentKind.STARTED and updates[0].summary == "look around"
    assert updates[-1].kind is SubagentKind.FINISHED and updates[-1].state == "completed"
    assert {u.task for u in updates} == {updates[0].task}
    assert any(r.prompt == "sub task [[say sub done]]" for r in fake.message_requests)
