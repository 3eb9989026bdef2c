"""The driver side of the Cursor hook relay: the hooks file in the workspace and the socket the hooks ask.

For a run whose ``Config.hook_relay`` names a relay command, ``relay_hooks`` writes ``<workspace>/.cursor/hooks.json``
(the user's own hooks kept, ours added for the ``before*`` tool hooks; the user's file put back afterwards) and
``HookRelay`` serves a private Unix socket. Each hook Cursor runs at a tool boundary connects, gets the messages
claimed at the in-run boundary, and confirms once it has handed them to Cursor: they are then delivered (mechanism
``cursor_hook``); a hook that does not confirm puts them back in the queue as possible duplicates, for the turn end.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import os
import secrets
import shlex
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

from ... import Policy
from ...driver import ApprovalMode, Boundary, ClaimedMessage, MessagePort
from ._hook_relay import PERMISSION_ENV, SOCKET_ENV, TIMEOUT, TOKEN_ENV

HOOK_EVENTS = ("beforeShellExecution", "beforeMCPExecution", "preToolUse")
HOOKS_FILE = os.path.join(".cursor", "hooks.json")
MECHANISM = "cursor_hook"
_ORIGINAL = ".adaptor_nb-original"
_ABSENT = ".adaptor_nb-absent"  # marks that there was no hooks file before ours
_OURS_DIR = ".adaptor_nb-hooks-dir"  # marks a .cursor/ folder the relay created
_active: dict[str, int] = {}  # hooks file -> runs using it


def default_hook_relay() -> list[str]:
    """The relay command of this interpreter: ``python -m adaptor_nb.drivers.cursor._hook_relay``."""
    return [sys.executable, "-m", "adaptor_nb.drivers.cursor._hook_relay"]


def hook_permission(policy: Policy) -> str:
    """What the relay answers Cursor's permission question with: allow only where the run auto-approves anyway."""
    return "allow" if policy.approvals.permission is ApprovalMode.AUTO_APPROVE else "ask"


class HookRelay:
    """One turn's relay socket; ``env`` goes into the CLI's environment (the hooks inherit it)."""

    def __init__(self, port: MessagePort, permission: str) -> None:
        self._port = port
        self._token = secrets.token_hex(16)
        self._dir = tempfile.mkdtemp(prefix="adaptor_nb-relay-")
        self.address = os.path.join(self._dir, "relay.sock")
        self._server: asyncio.AbstractServer | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self.env = {SOCKET_ENV: self.address, TOKEN_ENV: self._token, PERMISSION_ENV: permission}

    async def __aenter__(self) -> HookRelay:
        self._server = await asyncio.start_unix_server(self._serve, path=self.address)
        os.chmod(self.address, 0o600)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._handlers):
            task.cancel()
        for task in list(self._handlers):
            with contextlib.suppress(BaseException):
                await task
        with contextlib.suppress(OSError):
            os.remove(self.address)
        with contextlib.suppress(OSError):
            os.rmdir(self._dir)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
        claimed: list[ClaimedMessage] = []
        confirmed = False
        try:
            request = json.loads(await asyncio.wait_for(reader.readline(), TIMEOUT) or b"{}")
            token = request.get("token", "") if isinstance(request, dict) else ""
            if not isinstance(token, str) or not hmac.compare_digest(token, self._token):
                return
            claimed = self._port.claim(Boundary.IN_RUN)
            text = "\n\n".join(m.text for m in claimed)
            writer.write(json.dumps({"agent_message": text}).encode() + b"\n")
            await writer.drain()
            if claimed:
                confirmed = (await asyncio.wait_for(reader.readline(), TIMEOUT)).strip() == b"ok"
        except (OSError, ValueError, TimeoutError):
            pass
        finally:
            for m in claimed:
                if confirmed:
                    self._port.delivered(m, boundary=Boundary.IN_RUN, mechanism=MECHANISM)
                else:
                    self._port.requeue(m, possible_duplicate=True)
            writer.close()
            if task is not None:
                self._handlers.discard(task)


def hooks_document(argv: list[str], base: dict[str, Any] | None = None) -> bytes:
    """``hooks.json`` with the relay command added to each tool hook, after the user's own hooks (``base``)."""
    doc: dict[str, Any] = dict(base or {})
    doc["version"] = doc.get("version", 1)
    hooks = dict(doc.get("hooks") or {}) if isinstance(doc.get("hooks"), dict) else {}
    command = shlex.join(argv)
    for event in HOOK_EVENTS:
        entries = [e for e in hooks.get(event) or [] if isinstance(e, dict)]
        if not any(e.get("command") == command for e in entries):
            entries.append({"command": command})
        hooks[event] = entries
    doc["hooks"] = hooks
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()


@contextlib.contextmanager
def relay_hooks(workspace: str, argv: list[str]) -> Iterator[str]:
    """Write the relay into ``<workspace>/.cursor/hooks.json`` for the block, then put back what was there."""
    path = os.path.join(workspace, HOOKS_FILE)
    if path not in _active:
        _put_back(path)  # an earlier process died with ours in place
        directory = os.path.dirname(path)
        if not os.path.isdir(directory):
            os.makedirs(directory)
            open(os.path.join(directory, _OURS_DIR), "wb").close()
        base: dict[str, Any] | None = None
        if os.path.exists(path):
            with contextlib.suppress(OSError, ValueError):
                with open(path, encoding="utf-8") as fh:
                    loaded = json.load(fh)
                base = loaded if isinstance(loaded, dict) else None
            os.replace(path, path + _ORIGINAL)
        else:
            open(path + _ABSENT, "wb").close()
        tmp = path + ".adaptor_nb-tmp"
        with open(tmp, "wb") as fh:
            fh.write(hooks_document(argv, base))
        os.replace(tmp, path)
    _active[path] = _active.get(path, 0) + 1
    try:
        yield path
    finally:
        _active[path] -= 1
        if not _active[path]:
            del _active[path]
            _put_back(path)


def _put_back(path: str) -> None:
    if os.path.exists(path + _ORIGINAL):
        os.replace(path + _ORIGINAL, path)
    elif os.path.exists(path + _ABSENT):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
        os.remove(path + _ABSENT)
    marker = os.path.join(os.path.dirname(path), _OURS_DIR)
    if os.path.exists(marker):
        with contextlib.suppress(OSError):
            os.remove(marker)
            os.rmdir(os.path.dirname(path))
