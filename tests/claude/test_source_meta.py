"""Events carry the provider's own coordinates (EventSourceMeta): the Claude session id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adaptor_nb import Notice, TextDelta, ToolCall

from .helpers import drain, of

pytestmark = pytest.mark.claude


async def test_text_and_tool_events_carry_the_claude_session_id(agent_factory, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    read = json.dumps({"file_path": str(workspace / "a.txt")})
    events, result, err = await drain(agent_factory().send(f"read [[tool Read {read}]] [[say done reading]]"))
    assert err is None and result is not None
    init = next(n for n in of(events, Notice) if n.metadata.get("code") == "claude.init")
    session = init.metadata["session_id"]
    assert session and result.metadata["session_id"] == session
    sourced = [*of(events, TextDelta), *of(events, ToolCall)]
    assert of(events, TextDelta) and of(events, ToolCall)
    for ev in sourced:
        assert ev.meta.source is not None, ev
        assert ev.meta.source.thread_id == session
    assert all(ev.meta.sequence > 0 and ev.meta.run_id for ev in sourced)  # the core's stamp is still there
