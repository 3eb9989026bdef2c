"""The Cursor hook relay (section 14): supplemental input reaches a running turn at its next tool call through the
hooks the replay stand-in runs, as Cursor runs them; and the provider coordinates (source metadata) of Cursor's
events."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from _support import of

from adaptor_nb import Agent, MessageState, MessageUpdate, Notice, TextDelta
from adaptor_nb.drivers import cursor


async def test_a_message_reaches_the_running_turn_through_the_hook(
    make_driver, workspace: Path, tmp_path: Path
) -> None:
    hooks_log = tmp_path / "hooks.jsonl"
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    driver = make_driver(
        "shell-read-edit.jsonl",
        "--replay-gate",
        f"2={gate}",
        "--replay-run-hooks",
        str(hooks_log),
        hook_relay=cursor.default_hook_relay(),
    )
    assert "in_run" in {b.value for b in driver.descriptor().messages.boundaries}
    async with Agent(driver) as agent:
        stream = agent.send("look around")
        events = []
        sent = False
        async for ev in stream.events():
            events.append(ev)
            if not sent and isinstance(ev, TextDelta) and ev.text:
                await stream.send("also check the tests", id="m-1")
                sent = True
                await asyncio.to_thread(lambda: open(gate, "wb").close())  # the replay goes on to its tool call
        result = await stream.result()
    (outcome,) = result.messages()
    assert (outcome.state, outcome.boundary, outcome.mechanism) == (MessageState.DELIVERED, "in_run", "cursor_hook")
    answers = [json.loads(line) for line in hooks_log.read_text().splitlines()]
    delivered = [a for a in answers if (a["answer"] or {}).get("agent_message")]
    assert len(delivered) == 1 and "also check the tests" in delivered[0]["answer"]["agent_message"]
    assert delivered[0]["event"] == "beforeShellExecution"
    assert all(a["answer"]["permission"] == "ask" for a in answers)  # the policy does not auto-approve
    updates = [u for u in of(events, MessageUpdate) if u.id == "m-1"]
    assert updates[-1].state is MessageState.DELIVERED
    assert "cursor_hook_unavailable" not in [n.metadata.get("code") for n in of(events, Notice)]
    assert not (workspace / ".cursor").exists()  # the hooks file is gone with the run


async def test_the_relay_keeps_the_users_own_hooks(make_driver, workspace: Path, tmp_path: Path) -> None:
    own = {"version": 1, "hooks": {"afterFileEdit": [{"command": "./format.sh"}]}}
    (workspace / ".cursor").mkdir()
    (workspace / ".cursor" / "hooks.json").write_text(json.dumps(own))
    log = tmp_path / "hooks.jsonl"
    driver = make_driver(
        "shell-read-edit.jsonl", "--replay-run-hooks", str(log), hook_relay=cursor.default_hook_relay()
    )
    async with Agent(driver) as agent:
        await agent.send("look around").result()
    assert json.loads((workspace / ".cursor" / "hooks.json").read_text()) == own
    assert all(a["answer"] == {"permission": "ask"} for a in map(json.loads, log.read_text().splitlines()))


def test_run_hook_relay_if_requested_is_false_in_an_ordinary_start(monkeypatch) -> None:
    monkeypatch.delenv("ADAPTOR_NB_CURSOR_HOOK_SOCKET", raising=False)
    assert cursor.run_hook_relay_if_requested() is False


async def test_cursor_events_carry_their_provider_coordinates(make_driver) -> None:
    from adaptor_nb import ToolCall, ToolResult

    async with Agent(make_driver("shell-read-edit.jsonl")) as agent:
        stream = agent.send("look around")
        events = [ev async for ev in stream.events()]
    provider = [e for e in events if isinstance(e, TextDelta | ToolCall | ToolResult)]
    assert provider and all(e.meta.source is not None for e in provider)
    assert {e.meta.source.thread_id for e in provider} == {"cursor-tools"}
    sequences = [e.meta.source.sequence for e in provider]
    assert sequences == sorted(sequences) and sequences[0] >= 1
