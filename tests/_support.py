"""Helpers shared by every test folder: draining a stream, picking events by type, locating a pinned CLI."""

from __future__ import annotations

from typing import Any, TypeVar

import psutil
import pytest

from adaptor_nb import AdaptorError, Event, Result
from adaptor_nb.testing import find_cli

E = TypeVar("E", bound=Event)


async def drain(stream: Any) -> tuple[list[Event], Result | None, BaseException | None]:
    """All events of a stream, then its result or error."""
    events = [ev async for ev in stream.events()]
    try:
        return events, await stream.result(), None
    except AdaptorError as exc:
        return events, None, exc


async def outcome(stream: Any) -> tuple[Result | None, BaseException | None]:
    """The result or error of a stream whose events were already consumed."""
    try:
        return await stream.result(), None
    except AdaptorError as exc:
        return None, exc


def of(events: list[Event], kind: type[E]) -> list[E]:
    """The events of one type, in order."""
    return [e for e in events if isinstance(e, kind)]


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def require_cli(name: str, how_to_install: str) -> str:
    """The pinned CLI ``name``; the test skips, saying how to install it, when it is not installed."""
    path: str | None = find_cli(name)
    if path is None:
        pytest.skip(f"the {name} CLI is not installed: {how_to_install}")
    return path
