"""A stand-in ``codex app-server`` that follows a script, for protocol faults the real one cannot be made to show.

Usage: ``python fake_app_server.py SCRIPT [ignored args...]``. SCRIPT is a JSON object:

* ``before_initialize``: lines written before ``initialize`` is answered
* ``turn``: lines written after ``turn/start`` is answered (``@TURN@`` becomes the turn id)
* ``answer_turn``: false to leave ``turn/start`` unanswered (default true)

Every other request gets an empty result; ``thread/start`` gets a thread.
"""

from __future__ import annotations

import json
import sys

with open(sys.argv[1]) as fh:
    script = json.load(fh)
TURN = "turn_1"


def write(lines: list[str]) -> None:
    for line in lines:
        sys.stdout.write(line.replace("@TURN@", TURN) + "\n")
    sys.stdout.flush()


def answer(rid: object, result: object) -> None:
    write([json.dumps({"id": rid, "result": result})])


for raw in sys.stdin:
    msg = json.loads(raw)
    method, rid = msg.get("method"), msg.get("id")
    if rid is None:
        continue
    if method == "initialize":
        write(script.get("before_initialize", []))
        answer(rid, {"userAgent": "fake/1"})
    elif method == "thread/start":
        answer(rid, {"thread": {"id": "thr_1"}, "model": "m"})
    elif method == "turn/start":
        if script.get("answer_turn", True):
            answer(rid, {"turn": {"id": TURN, "status": "inProgress"}})
            write(script.get("turn", []))
    else:
        answer(rid, {})
