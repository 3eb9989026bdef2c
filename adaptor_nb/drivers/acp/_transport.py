"""The SDK's message transport over an agent process's stdio: one JSON-RPC message per line.

Lines are read through the process's bounded line reader (``Config.max_line_bytes``). What the SDK would only log
as an error is handed to the run instead: a line that is not a JSON object, and a notification outside ACP (an
agent's own extension, such as Qwen Code's ``qwen/notify/*``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ...driver import CLIProcess, LineTooLong


def client_methods() -> frozenset[str]:
    """The methods an ACP agent may call on its client, from the SDK's schema."""
    from acp.meta import CLIENT_METHODS

    return frozenset(CLIENT_METHODS.values())


class LineTransport:
    """``acp.connect_to_agent``'s message-level transport on ``proc``.

    ``on_line`` sees every raw line; ``on_garbage`` a line that is not a JSON object; ``on_extension`` a notification
    whose method is not an ACP client method (method, params). ``overflow`` keeps a too-long line's error: the
    process was stopped and the stream ends."""

    def __init__(
        self,
        proc: CLIProcess,
        *,
        on_line: Callable[[bytes], None],
        on_garbage: Callable[[bytes], None],
        on_extension: Callable[[str, Any], None],
    ) -> None:
        self.proc = proc
        self.on_line = on_line
        self.on_garbage = on_garbage
        self.on_extension = on_extension
        self.known = client_methods()
        self.overflow: LineTooLong | None = None

    async def send(self, message: dict[str, Any]) -> None:
        await self.proc.write_json(message)

    async def receive(self) -> dict[str, Any] | None:
        while True:
            try:
                line = await self.proc.readline()
            except LineTooLong as exc:
                self.overflow = exc
                return None
            if line is None:
                return None
            if not line.strip():
                continue
            self.on_line(line)
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            if not isinstance(message, dict):
                self.on_garbage(line)
                continue
            method = message.get("method")
            if isinstance(method, str) and "id" not in message and not self._acp(method):
                self.on_extension(method, message.get("params"))
                continue
            return message

    def _acp(self, method: str) -> bool:
        return method in self.known or method.startswith("_")

    async def close(self) -> None:
        self.proc.close_stdin()


__all__ = ["LineTransport", "client_methods"]
