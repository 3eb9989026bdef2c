"""The session recorder: events with their coordinates, a narrow default exposure, replay without responders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adaptor_nb import (
    Agent,
    ApprovalKind,
    ApprovalRequest,
    ApprovalUnavailableError,
    Done,
    ToolCall,
    TurnEnd,
    approve_all,
)
from adaptor_nb.drivers.reference import Config, Driver
from adaptor_nb.drivers.reference._scenario import Text, ThinkingStep, ToolUse, Turn, scenario
from adaptor_nb.recorder import ExposurePolicy, SessionRecorder, load, replay

SCRIPT = scenario(
    Turn(
        ThinkingStep("weighing it"),
        ToolUse("Bash", {"command": "ls"}, {"output": "a.txt"}, approval=None),
        Text("the answer is 42"),
        usage=(11, 7),
    )
)


async def _recorded(tmp_path: Path, exposure: ExposurePolicy | None = None) -> tuple[SessionRecorder, list[object]]:
    agent = Agent(Driver(Config(scenario=SCRIPT)))
    try:
        stream = agent.thread("audit").send("what is the answer?")
        rec = SessionRecorder(tmp_path / "session.jsonl", exposure=exposure)
        live: list[object] = []
        async for event in stream.events():
            live.append(event)
            rec.record(event)
        return rec, live
    finally:
        await agent.close()


async def test_replayed_events_equal_the_live_ones_with_their_coordinates(tmp_path: Path) -> None:
    rec, live = await _recorded(tmp_path)
    replayed = list(replay(tmp_path / "session.jsonl"))
    assert [type(e) for e in replayed] == [type(e) for e in live]
    for a, b in zip(live, replayed, strict=True):
        assert a.meta == b.meta  # type: ignore[attr-defined]
        if not isinstance(a, Done | TurnEnd):  # their results are filtered by the exposure policy
            assert a == b
    assert [e.meta.sequence for e in replayed] == sorted(e.meta.sequence for e in replayed)  # type: ignore[attr-defined]
    assert {e.meta.thread_key for e in replayed} == {"audit"}  # type: ignore[attr-defined]
    tool = next(e for e in replayed if isinstance(e, ToolCall) and e.args)
    assert tool.args == {"command": "ls"}
    lines = (tmp_path / "session.jsonl").read_text().splitlines()
    assert json.loads(lines[0]) == {"cassette": "adaptor_nb-cassette", "version": 1}
    assert len(load(tmp_path / "session.jsonl")) == len(rec.records) == len(live)


async def test_done_keeps_only_run_id_turns_text_summary_by_default(tmp_path: Path) -> None:
    _, live = await _recorded(tmp_path)
    done = next(r for r in load(tmp_path / "session.jsonl") if r.kind == "Done")
    assert set(done.data["result"]) == {"run_id", "turns", "text", "summary"}
    assert done.diagnostics == {}
    result = done.event().result  # type: ignore[attr-defined]
    live_done = live[-1]
    assert isinstance(live_done, Done) and live_done.result is not None
    assert (result.text, result.turns, result.run_id) == (
        live_done.result.text,
        live_done.result.turns,
        live_done.result.run_id,
    )
    assert result.usage is None and result.model == ""


async def test_exposure_opts_usage_metadata_and_private_audit_data_in(tmp_path: Path) -> None:
    policy = ExposurePolicy(
        include_usage=True, include_metadata=True, include_transcript=True, include_raw_streams=True
    )
    await _recorded(tmp_path, policy)
    done = next(r for r in load(tmp_path / "session.jsonl") if r.kind == "Done")
    assert done.data["result"]["usage"]["output_tokens"] == 7 and done.data["result"]["model"] == "reference-scripted"
    assert "transcript" in done.diagnostics and "raw_streams" in done.diagnostics
    result = done.event().result  # type: ignore[attr-defined]
    assert result.usage.output_tokens == 7
    assert result.transcript() == []  # private fields are not rebuilt on the replayed Result


async def test_a_replayed_approval_request_has_no_live_responder(tmp_path: Path) -> None:
    script = scenario(Turn(ToolUse("Bash", {"command": "rm x"}, {"output": ""}, approval=ApprovalKind.PERMISSION)))
    agent = Agent(Driver(Config(scenario=script)), on_approval=approve_all())
    rec = SessionRecorder()
    try:
        await rec.consume(agent.send("remove x"))
    finally:
        await agent.close()
    requests = [e for e in replay(rec.records) if isinstance(e, ApprovalRequest)]
    assert requests and requests[0].kind is ApprovalKind.PERMISSION
    with pytest.raises(ApprovalUnavailableError, match="not bound to a live run"):
        requests[0].approve()
