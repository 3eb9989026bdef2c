#!/usr/bin/env python3
"""A misbehaving ACP agent for fault tests (standard library only). The first argument picks the fault:

``silent``   never answers ``initialize``
``version``  answers ``initialize`` with protocol version 99
``auth``     answers ``session/new`` with ``auth_required`` (-32000)
``crash``    sends one text chunk of the prompt's answer, writes to stderr and exits 7
``garbage``  answers the prompt with a line that is not JSON, then a normal answer
"""

from __future__ import annotations

import json
import sys
import time


def send(obj: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def chunk(session: str, text: str) -> None:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}})


def main(fault: str) -> int:
    for line in sys.stdin:
        msg = json.loads(line)
        method, rid = msg.get("method"), msg.get("id")
        if method == "initialize":
            if fault == "silent":
                time.sleep(3600)
            version = 99 if fault == "version" else 1
            auth = [{"id": "fake-login", "name": "Fake login"}]
            send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": version, "authMethods": auth}})
        elif method == "session/new":
            if fault == "auth":
                send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32000, "message": "Authentication required"}})
            else:
                send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": "fake-session-1"}})
        elif method == "session/prompt":
            session = msg["params"]["sessionId"]
            if fault == "crash":
                chunk(session, "partial answer")
                sys.stderr.write("fake agent: out of cheese\n")
                sys.stderr.flush()
                return 7
            if fault == "garbage":
                sys.stdout.write("this is {not json\n")
            chunk(session, "whole answer")
            send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
