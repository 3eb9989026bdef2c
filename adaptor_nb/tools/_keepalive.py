"""Progress notifications while a host-tool call runs, so a client's idle watchdog does not cut it off.

Claude Code aborts an HTTP MCP call that has sent "no response or progress notification" for
``CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT`` (300 s by default; it checks every 30 s). A ``notifications/progress`` for the
call's ``progressToken`` resets that watchdog, so the tool server sends one every :data:`INTERVAL` seconds while a
call is running, but only when the client gave a token (a client that asks for no progress gets none).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

__all__ = ["INTERVAL", "progress_token", "wants_progress", "while_running"]

INTERVAL = 5.0
"""Seconds between keep-alives: well under the 300 s default, and under any idle timeout of 10 s or more."""

T = TypeVar("T")

Beat = Callable[[int], Awaitable[None]]


def progress_token(meta: Mapping[str, Any] | None) -> str | int | None:
    """The request's ``_meta.progressToken`` (the mcp package files it as ``progress_token``)."""
    if not meta:
        return None
    token = meta.get("progress_token", meta.get("progressToken"))
    return token if isinstance(token, str | int) and not isinstance(token, bool) else None


def wants_progress(body: bytes) -> bool:
    """Whether a POSTed JSON-RPC body is a ``tools/call`` that carries a progress token (cheap byte test)."""
    return b'"tools/call"' in body and b'"progressToken"' in body


async def while_running(work: Awaitable[T], beat: Beat, interval: float) -> T:
    """Await ``work``, calling ``beat(n)`` every ``interval`` seconds until it ends. Cancelling this cancels it.

    A failing beat (the client went away) stops the beats, not the work.
    """
    task = asyncio.ensure_future(work)
    n = 0
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=interval if interval > 0 else None)
            if done:
                return task.result()
            n += 1
            try:
                await beat(n)
            except Exception:
                interval = 0.0
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
