#!/usr/bin/env python3
"""A misbehaving ACP agent for fault tests (standard library only). The first argument picks the fault:

``silent``   never answers ``initialize``
``version``  answers ``initialize`` with protocol version 99
``auth``     answers ``session/new`` with ``auth_required`` (-32000)
``crash``    sends one text chunk of the prompt's answer, writes to stderr and exits 7
``garbage``  answers the prompt with a line that is not JSON, then a normal answer
``stall``    sends one text chunk of the prompt's answer, then nothing (not even after ``session/cancel``)
``ghost``    asks permission for a tool call it never announced, then says how the client answered
``anonymous`` asks permission for a tool call without an id, then says how the client answered
``outside``  asks the client to read ``/etc/hostname`` and to write ``../outside.txt``, then says the answers
``mcp``      advertises MCP over http only and answers with the MCP servers ``session/new`` gave it
``extension`` sends a notification outside ACP (``fake/notify``) before its answer
"""

from __future__ import annotations

import json
import os
import sys
import time


def send(obj: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def chunk(session: str, text: str) -> None:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}})


def ask(rid: str, method: str, params: dict[str, object]) -> dict[str, object]:
    """Send a request to the client and read lines until its answer (notifications from it are skipped)."""
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("id") == rid and "method" not in msg:
            return dict(msg)
    return {}


def outcome(answer: dict[str, object]) -> str:
    error = answer.get("error")
    if isinstance(error, dict):
        return f"error {error.get('code')}"
    return json.dumps(answer.get("result"))


def main(fault: str) -> int:
    cwd = ""
    servers: object = None
    for line in sys.stdin:
        msg = json.loads(line)
        method, rid = msg.get("method"), msg.get("id")
        if method == "initialize":
            if fault == "silent":
                time.sleep(3600)
            version = 99 if fault == "version" else 1
            auth = [{"id": "fake-login", "name": "Fake login"}]
            result = {"protocolVersion": version, "authMethods": auth}
            if fault == "mcp":
                result["agentCapabilities"] = {"mcpCapabilities": {"http": True, "sse": False}}
            send({"jsonrpc": "2.0", "id": rid, "result": result})
        elif method == "session/new":
            if fault == "auth":
                send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32000, "message": "Authentication required"}})
            else:
                cwd = str(msg["params"]["cwd"])
                servers = msg["params"].get("mcpServers")
                send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": "fake-session-1"}})
        elif method == "session/prompt":
            session = msg["params"]["sessionId"]
            if fault == "crash":
                chunk(session, "partial answer")
                sys.stderr.write("fake agent: out of cheese\n")
                sys.stderr.flush()
                return 7
            if fault == "stall":
                chunk(session, "partial answer")
                time.sleep(3600)
            if fault in ("ghost", "anonymous"):
                call = {"toolCallId": "ghost-1", "title": "rm -rf /", "kind": "execute"}
                if fault == "anonymous":
                    del call["toolCallId"]
                options = [{"optionId": "yes", "name": "Allow", "kind": "allow_once"}]
                answer = ask(
                    "p1", "session/request_permission", {"sessionId": session, "toolCall": call, "options": options}
                )
                chunk(session, f"permission: {outcome(answer)}")
            if fault == "outside":
                outside = os.path.join(os.path.dirname(cwd), "outside.txt")
                read = ask("r1", "fs/read_text_file", {"sessionId": session, "path": "/etc/hostname"})
                wrote = ask("w1", "fs/write_text_file", {"sessionId": session, "path": outside, "content": "x"})
                chunk(session, f"read: {outcome(read)}; write: {outcome(wrote)}")
            if fault == "mcp":
                chunk(session, json.dumps(servers, sort_keys=True))
            if fault == "extension":
                send({"jsonrpc": "2.0", "method": "fake/notify", "params": {"sessionId": session}})
            if fault == "garbage":
                sys.stdout.write("this is {not json\n")
            if fault in ("plain", "garbage", "extension", "silent", "version", "auth"):
                chunk(session, "whole answer")
            send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
