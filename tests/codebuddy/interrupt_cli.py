"""A stand-in for ``codebuddy-headless`` that ends an interrupted tool run without a ``result`` line.

CodeBuddy Code 2.163.0 wrote a ``result`` after every interrupt it was measured with; the CLI guide also saw an
interrupt during a running tool (a ``sleep``) that killed the tool, wrote the tool result "Interrupted by user"
twice and then no ``result`` at all, with the process still alive. This script plays that turn in the CLI's own
stream-json shapes, so the driver's code for it runs for real.

Usage: ``python interrupt_cli.py [CLI flags...]``; ``--version`` prints a version, ``--resume ID`` continues ID.
Each start appends its argv as one JSON line to the file named by ``INTERRUPT_CLI_LOG``.

* The ``initialize`` control request is answered with a small body (one model); other requests with success.
* A user line whose text contains ``run the tool`` starts a turn that streams some text, calls Bash and then
  waits with the tool "running". The ``interrupt`` control request is acknowledged (a ``system/status`` line
  and ``interrupted: true``), the tool result "Interrupted by user" is written twice, and the turn never gets
  a ``result``. With ``INTERRUPT_CLI_EXIT=1`` the process exits with code 0 right after that.
* Any other user line is one plain turn: text deltas, the assistant message and a ``result`` success.
* The process exits when stdin closes (or on SIGTERM).
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from typing import Any

VERSION = "2.163.0"
MODEL = "default-model"
TOOL_ID = "call_mock_1_0"
out = sys.stdout


def send(obj: dict[str, Any]) -> None:
    out.write(json.dumps(obj, separators=(",", ":")) + "\n")
    out.flush()


class StandIn:
    def __init__(self, argv: list[str]) -> None:
        self.session_id = argv[argv.index("--resume") + 1] if "--resume" in argv else str(uuid.uuid4())
        self.turns = 0
        self.tool_running = False

    def stamp(self, frame: dict[str, Any]) -> dict[str, Any]:
        frame.setdefault("session_id", self.session_id)
        frame.setdefault("uuid", str(uuid.uuid4()))
        return frame

    def event(self, event: dict[str, Any]) -> None:
        send(self.stamp({"type": "stream_event", "event": event, "parent_tool_use_id": None}))

    def text_deltas(self, index: int, text: str) -> None:
        self.event({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
        for word in text.split(" "):
            piece = word if word == text.split(" ")[-1] else word + " "
            self.event({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}})
        self.event({"type": "content_block_stop", "index": index})

    def start_turn(self) -> str:
        self.turns += 1
        send(
            {
                "type": "system",
                "subtype": "init",
                "uuid": self.session_id,
                "session_id": self.session_id,
                "cwd": os.getcwd(),
                "tools": ["Bash", "Read", "Write"],
                "mcp_servers": [],
                "model": MODEL,
                "permissionMode": "default",
            }
        )
        send(self.stamp({"type": "system", "subtype": "status", "status": None}))
        message_id = uuid.uuid4().hex
        self.event(
            {
                "type": "message_start",
                "message": {
                    "model": MODEL,
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": 0, "output_tokens": 0},
                },
            }
        )
        return message_id

    def plain_turn(self, prompt: str) -> None:
        message_id = self.start_turn()
        text = f"answer {self.turns} in {self.session_id}"
        self.text_deltas(0, text)
        self.event({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}})
        self.event({"type": "message_stop"})
        message = {"id": message_id, "content": [{"type": "text", "text": text}], "model": MODEL, "role": "assistant"}
        send(self.stamp({"type": "assistant", "message": message, "parent_tool_use_id": None}))
        send(
            self.stamp(
                {
                    "type": "result",
                    "subtype": "success",
                    "is_error": False,
                    "result": text,
                    "num_turns": self.turns,
                    "total_cost_usd": 0,
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                }
            )
        )

    def tool_turn(self) -> None:
        message_id = self.start_turn()
        self.text_deltas(0, "working on it now")
        call = {"type": "tool_use", "id": TOOL_ID, "name": "Bash", "input": {}}
        self.event({"type": "content_block_start", "index": 1, "content_block": call})
        args = json.dumps({"command": "sleep 600", "description": "wait"})
        self.event(
            {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": args}}
        )
        self.event({"type": "content_block_stop", "index": 1})
        self.event({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}})
        self.event({"type": "message_stop"})
        content = [{"type": "text", "text": "working on it now"}, {**call, "input": json.loads(args)}]
        message = {"id": message_id, "content": content, "model": MODEL, "role": "assistant", "stop_reason": "tool_use"}
        send(self.stamp({"type": "assistant", "message": message, "parent_tool_use_id": None}))
        self.tool_running = True  # the "tool" runs until an interrupt kills it

    def control(self, frame: dict[str, Any]) -> None:
        rid = frame.get("request_id")
        request = frame.get("request") or {}
        subtype = request.get("subtype")
        body: dict[str, Any] = {}
        if subtype == "initialize":
            body = {"commands": [], "models": [{"id": MODEL, "name": "Auto"}], "currentModelId": MODEL}
        elif subtype == "interrupt":
            if not self.tool_running:
                reply = {"subtype": "error", "request_id": rid, "error": "Session not found: current"}
                send({"type": "control_response", "response": reply})
                return
            send(self.stamp({"type": "system", "subtype": "status", "status": None}))
            body = {"session_id": self.session_id, "interrupted": True, "reason": "SDK request"}
        send({"type": "control_response", "response": {"subtype": "success", "request_id": rid, "response": body}})
        if subtype == "interrupt":
            self.tool_running = False
            result = {
                "type": "tool_result",
                "tool_use_id": TOOL_ID,
                "is_error": True,
                "content": [{"type": "text", "text": "Interrupted by user"}],
            }
            for _ in range(2):  # written twice, as the guide saw; no result follows
                send(
                    self.stamp(
                        {"type": "user", "message": {"role": "user", "content": [result]}, "parent_tool_use_id": None}
                    )
                )
            if os.environ.get("INTERRUPT_CLI_EXIT") == "1":
                sys.exit(0)

    def serve(self) -> None:
        for line in sys.stdin:
            if not line.strip():
                continue
            frame = json.loads(line)
            kind = frame.get("type")
            if kind == "control_request":
                self.control(frame)
            elif kind == "user":
                content = (frame.get("message") or {}).get("content")
                prompt = content if isinstance(content, str) else json.dumps(content)
                if "run the tool" in prompt:
                    self.tool_turn()
                else:
                    self.plain_turn(prompt)


def main() -> int:
    argv = sys.argv[1:]
    if "--version" in argv:
        print(f"{VERSION} (stand-in)")
        return 0
    log = os.environ.get("INTERRUPT_CLI_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(argv) + "\n")
    StandIn(argv).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
