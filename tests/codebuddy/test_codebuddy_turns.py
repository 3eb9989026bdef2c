"""Turn bookkeeping on one persistent CodeBuddy Code process: per-run step counts from the CLI's cumulative
``num_turns``, and prompts written right after a ``result`` that are neither lost nor run twice."""

from __future__ import annotations

from pathlib import Path

import pytest
from _support import drain, of

from adaptor_nb import Agent, ApprovalMode, ApprovalPolicy, Notice, Policy, ProcessInfo, ProcessKind
from adaptor_nb.testing import ChatReply, FakeChatCompletionsServer

from .conftest import DriverFactory

pytestmark = pytest.mark.codebuddy

AUTO = Policy(approvals=ApprovalPolicy(permission=ApprovalMode.AUTO_APPROVE))


async def test_each_run_reports_its_own_steps_although_the_cli_counts_them_per_process(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        thread = agent.thread("steps")
        text_only = await thread.send("[[say one]]").result()
        fake.enqueue(ChatReply.tool("Bash", {"command": "echo stepped", "description": "echo"}))
        fake.enqueue(ChatReply.text("two"))
        with_tool = await thread.send("use a tool", policy=AUTO).result()
        again = await thread.send("[[say three]]").result()
    # The CLI counts 2 per model round and keeps adding across the process's turns (2, 6, 8 here).
    assert [r.metadata["num_turns"] for r in (text_only, with_tool, again)] == ["2", "4", "2"]
    assert [r.turns for r in (text_only, with_tool, again)] == [1, 1, 1]


async def test_prompts_sent_right_after_each_result_are_neither_lost_nor_duplicated(
    make_driver: DriverFactory, fake: FakeChatCompletionsServer, workspace: Path
) -> None:
    prompts = [f"[[say answer {i}]]" for i in range(6)]
    texts = []
    async with Agent(make_driver(), workspace=str(workspace)) as agent:
        thread = agent.thread("fast")
        spawns = 0
        notices: list[Notice] = []
        for prompt in prompts:
            events, result, error = await drain(thread.send(prompt))  # the next send starts the moment this ends
            assert error is None and result is not None
            texts.append(result.text)
            spawns += len([e for e in of(events, ProcessInfo) if e.kind is ProcessKind.SPAWN])
            notices += of(events, Notice)
    assert texts == [f"answer {i}" for i in range(6)]
    assert spawns == 1  # all on one process
    # Every prompt reached the model exactly once, in order, in one session that keeps its history.
    assert [r.prompt for r in fake.model_requests] == prompts
    assert fake.model_requests[-1].user_queries() == prompts
    assert not [n for n in notices if "startup was cancelled" in n.text]
