"""An INTERRUPT message whose interrupt leaves no ``result`` line, driven through the real driver and a Thread.

CodeBuddy Code 2.163.0 wrote a ``result`` after every interrupt measured here, so the stand-in interrupt_cli.py
plays the turn the CLI guide saw: an interrupt while a tool runs, "Interrupted by user" twice, then nothing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from _support import alive, drain, of, outcome

from adaptor_nb import (
    Agent,
    Done,
    MessageFailure,
    MessageState,
    MessageUpdate,
    ProcessInfo,
    ProcessKind,
    RunFinished,
    Timing,
    ToolCall,
    ToolResult,
    TurnEnd,
)
from adaptor_nb.drivers.codebuddy import Config, Driver

pytestmark = pytest.mark.codebuddy

SCRIPT = Path(__file__).with_name("interrupt_cli.py")


@pytest.mark.parametrize("exits", [False, True], ids=["stays-alive", "exits-after"])
async def test_an_interrupt_that_leaves_no_result_ends_the_turn_and_keeps_the_checkpoint(
    tmp_path: Path, workspace: Path, exits: bool
) -> None:
    """The guide's process stays alive after the unanswered turn; ``exits-after`` also ends it at once (not
    observed, a robustness variant: the end of stdout must not turn the finished turn into a crash)."""
    log = tmp_path / "argv.jsonl"
    env = {"INTERRUPT_CLI_LOG": str(log), "INTERRUPT_CLI_EXIT": "1" if exits else "0"}
    driver = Driver(Config(command=[sys.executable, str(SCRIPT)], env=env, grace_period=1.0))
    async with Agent(driver, workspace=str(workspace)) as agent:
        thread = agent.thread("t")
        first_events, first, first_error = await drain(thread.send("hello"))
        assert first is not None and first_error is None
        [spawn] = [e for e in of(first_events, ProcessInfo) if e.kind is ProcessKind.SPAWN]
        before = await thread.checkpoint()

        stream = thread.send("run the tool")
        events = []
        async for ev in stream.events():
            events.append(ev)
            if isinstance(ev, ToolCall) and len(of(events, ToolCall)) == 1:
                await stream.send("forget it", when=Timing.INTERRUPT, id="m-int")
        result, error = await outcome(stream)
        cli_gone = not alive(spawn.data["pid"])
        after = await thread.checkpoint()

        third = await thread.send("still there?").result()

    session = first.metadata["session_id"]
    assert first.text == f"answer 1 in {session}"
    assert before is not None and before.session_id == session

    # The run ends normally at the interrupted tool's result: a result, no error, the text streamed before.
    assert error is None and result is not None
    assert result.turns == 1 and result.text == "working on it now"
    assert result.metadata["terminal_reason"] == "interrupted" and result.metadata["session_id"] == session
    [done] = of(events, Done)
    assert events[-1] is done and done.result is not None and done.result.text == "working on it now"
    [finished] = of(events, RunFinished)
    assert not finished.failed
    assert len(of(events, TurnEnd)) == 1
    [tool_result] = of(events, ToolResult)  # the CLI's second copy is never read: the turn ended at the first
    assert tool_result.id == "call_mock_1_0" and "Interrupted by user" in json.dumps(tool_result.result)

    # The interrupt message reached the CLI only as the interrupt: it never opened a turn, so it fails.
    [message] = result.messages()
    assert (message.id, message.text, message.state) == ("m-int", "forget it", MessageState.FAILED)
    assert message.reason is MessageFailure.PROVIDER_REJECTED and message.turn == 0
    updates = [(u.state, u.reason) for u in of(events, MessageUpdate) if u.id == "m-int"]
    assert updates == [
        (MessageState.ACCEPTED, MessageFailure.NONE),
        (MessageState.FAILED, MessageFailure.PROVIDER_REJECTED),
    ]

    # Not healthy: the checkpoint is still the first run's, and the process (which would start a new session
    # without history at its next user line) was closed as soon as the run ended.
    assert after == before
    assert cli_gone

    # The next send starts a new process that resumes the kept session.
    starts = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(starts) == 2 and "--resume" not in starts[0]
    assert starts[1][-2:] == ["--resume", session]
    assert third.text == f"answer 1 in {session}" and third.metadata["session_id"] == session
