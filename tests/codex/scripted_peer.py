"""A scripted JSON-RPC peer on stdio, standing in for app-server where the real one cannot be made to misbehave.

Methods: ``busy`` answers -32001 (overloaded) ``n`` times before succeeding (``n`` from params, counted per
method); ``burst`` writes a notification, a server request, a non-JSON line and a large notification before its
answer; ``exit`` ends the process with code 7 without answering.
"""

from __future__ import annotations

import json
import sys

attempts: dict[str, int] = {}


def send(message: object) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for raw in sys.stdin:
    msg = json.loads(raw)
    method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    if rid is None or method is None:
        continue
    if method == "busy":
        key = params.get("key", "busy")
        attempts[key] = attempts.get(key, 0) + 1
        if attempts[key] <= params.get("n", 0):
            send({"id": rid, "error": {"code": -32001, "message": "server overloaded; retry later"}})
        else:
            send({"id": rid, "result": {"attempts": attempts[key]}})
    elif method == "burst":
        send({"method": "first/notification", "params": {"n": 1}})
        send({"method": "item/commandExecution/requestApproval", "id": 0, "params": {"itemId": "call_1"}})
        sys.stdout.write("this line is not JSON\n")
        send({"method": "big/notification", "params": {"blob": "x" * (5 * 1024 * 1024)}})
        send({"id": rid, "result": {"ok": True}})
    elif method == "exit":
        sys.stderr.write("scripted peer: exiting on request\n")
        sys.stderr.flush()
        sys.exit(7)
    else:
        send({"id": rid, "error": {"code": -32600, "message": f"unknown method {method}"}})
