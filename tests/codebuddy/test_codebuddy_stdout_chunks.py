"""CodeBuddy's stdout is decoded chunk by chunk as it arrives, and consecutive text deltas of one block are grouped.

The process the CodeBuddy driver starts answers ``initialize`` and then writes a burst of text deltas in one write;
its inbox must hold them as one frame per block, in order, decoded by the process the driver itself starts.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

from adaptor_nb.drivers import codebuddy

SESSION = "3f1c1d5e-0000-4000-8000-000000000001"


def delta(text: str, index: int = 0) -> dict[str, Any]:
    return {
        "type": "stream_event",
        "event": {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}},
        "session_id": SESSION,
        "parent_tool_use_id": None,
        "uuid": "8976c09b-aaa7-4923-8b11-b31edcdb5693",
    }


# Answers the initialize request, then writes every line of BURST in one write and waits for stdin to close.
CLI = textwrap.dedent(
    """
    import json, sys
    burst = json.loads(sys.argv[1])
    req = json.loads(sys.stdin.readline())
    answer = {"type": "control_response",
              "response": {"subtype": "success", "request_id": req["request_id"], "response": {}}}
    sys.stdout.write(json.dumps(answer) + "\\n")
    sys.stdout.write("".join(json.dumps(x, separators=(",", ":")) + "\\n" for x in burst))
    sys.stdout.flush()
    sys.stdin.read()
    """
)


async def _frames(tmp_path: Path, burst: list[dict[str, Any]]) -> list[Any]:
    script = tmp_path / "cli.py"
    script.write_text(CLI)
    driver = codebuddy.Driver(codebuddy.Config(command=[sys.executable, str(script), json.dumps(burst)]))
    argv = [*driver.command()]
    proc = await driver._start(argv, str(tmp_path), dict(os.environ), "")
    frames: list[Any] = []
    try:
        while len(frames) < 4:
            item = await asyncio.wait_for(proc.inbox.get(), 30)
            assert item[0] == 0, f"the CLI ended early: {proc.stderr_tail()}"
            frames += item[2]
    finally:
        await proc.close(1.0)
    return frames


async def test_a_burst_of_deltas_arrives_as_one_frame_per_block(tmp_path: Path) -> None:
    burst = [delta("a"), delta("b"), delta("c"), delta("d", 1), delta("e", 1), {"type": "system", "subtype": "x"}]
    burst.append(delta("f", 1))
    frames = await _frames(tmp_path, burst)
    assert frames == [(0, ["a", "b", "c"]), (1, ["d", "e"]), {"type": "system", "subtype": "x"}, (1, ["f"])]
