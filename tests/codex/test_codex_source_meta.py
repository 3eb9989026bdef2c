"""Events carry the provider's own coordinates (EventSourceMeta): the Codex thread id and turn id."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaptor_nb import Agent, Policy, SandboxLevel, TextDelta, ToolCall
from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._openai import Reply

from .conftest import DriverFactory
from .helpers import of, run_all

pytestmark = pytest.mark.codex


async def test_text_and_tool_events_carry_the_codex_thread_and_turn(
    make_driver: DriverFactory, fake: FakeOpenAIServer, workspace: Path
) -> None:
    fake.enqueue(Reply.exec_command("echo hi"))
    fake.enqueue(Reply.text("ran it"))
    policy = Policy(sandbox=SandboxLevel.UNRESTRICTED)
    async with Agent(make_driver(), workspace=str(workspace), policy=policy) as agent:
        events, result, error = await run_all(agent.send("run it"))
    assert error is None and result is not None
    thread_id = result.metadata["thread_id"]
    assert thread_id
    texts, calls = of(events, TextDelta), of(events, ToolCall)
    assert texts and calls
    turn_ids = set()
    for ev in [*texts, *calls]:
        assert ev.meta.source is not None, ev
        assert ev.meta.source.thread_id == thread_id
        turn_ids.add(ev.meta.source.turn_id)
    (turn_id,) = turn_ids
    assert turn_id and all(ev.meta.turn_id == turn_id for ev in texts)
