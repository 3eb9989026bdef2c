"""The hook side of the Cursor hook relay: the command Cursor runs at a tool boundary hands the run's pending
supplemental input to the agent.

When a Cursor run relays hooks, the driver writes ``.cursor/hooks.json`` naming the relay command for the ``before*``
tool hooks, and puts the address of its relay socket in the CLI's environment (the hooks Cursor starts inherit it).
The relay command reads the hook's JSON on stdin, asks the driver over that socket for the claimed messages, answers
Cursor with the permission the run's policy implies and the messages as ``agent_message``, then tells the driver the
answer was written (the messages are then delivered; otherwise the driver puts them back in the queue).

A host whose CLI relay is its own program calls ``run_hook_relay_if_requested()`` at the beginning of ``main``: it
returns False at once in an ordinary start, and in a relay start it answers the hook and exits the process. Standard
library only, so a relay start stays quick.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from typing import Any, NoReturn

SOCKET_ENV = "ADAPTOR_NB_CURSOR_HOOK_SOCKET"
TOKEN_ENV = "ADAPTOR_NB_CURSOR_HOOK_TOKEN"
PERMISSION_ENV = "ADAPTOR_NB_CURSOR_HOOK_PERMISSION"
TIMEOUT = 10.0  # seconds for the whole exchange with the driver: a hook must never hold Cursor up for long
MAX_ANSWER = 1 << 20


def run_hook_relay_if_requested() -> bool:
    """Answer a Cursor hook and exit when this process was started as the run's hook relay; else return False."""
    address = os.environ.get(SOCKET_ENV, "")
    if not address:
        return False
    _relay(address)


def _relay(address: str) -> NoReturn:
    permission = os.environ.get(PERMISSION_ENV, "") or "ask"
    try:
        payload = json.loads(sys.stdin.buffer.read() or b"{}")
    except ValueError:
        payload = {}
    answer: dict[str, Any] = {"permission": permission}
    written = False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(TIMEOUT)
            sock.connect(address)
            event = payload.get("hook_event_name", "") if isinstance(payload, dict) else ""
            request = {"token": os.environ.get(TOKEN_ENV, ""), "event": event}
            sock.sendall(json.dumps(request).encode() + b"\n")
            reply = _read_line(sock)
            text = reply.get("agent_message", "") if isinstance(reply, dict) else ""
            if isinstance(text, str) and text:
                answer["agent_message"] = text
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
            written = True
            sock.sendall(b"ok\n")  # the answer is with Cursor: the driver may count the messages delivered
    except (OSError, ValueError):
        # The driver is gone or did not answer: the hook still answers, without input (nothing was delivered).
        if not written:
            answer.pop("agent_message", None)
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
    raise SystemExit(0)


def _read_line(sock: socket.socket) -> Any:
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_ANSWER:
            raise ValueError("the relay answer is too long")
    return json.loads(data or b"{}")


if __name__ == "__main__":
    if not run_hook_relay_if_requested():
        sys.stderr.write("adaptor_nb cursor hook relay: not started by a Cursor run of adaptor_nb\n")
        sys.exit(2)
