"""Process reuse shared by drivers that park a CLI process in a Thread's ``ProcessSlot`` between runs."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol, TypeVar

from ._spi import Invocation, ProcessSlot


class Closeable(Protocol):
    async def close(self, grace: float) -> object: ...


P = TypeVar("P")


def parked(slot: ProcessSlot | None, kind: type[P]) -> P | None:
    """The process parked in ``slot`` when it is one of this driver's (``kind``), else None."""
    if slot is not None and isinstance(slot.value, kind):
        return slot.value
    return None


def continues_session(inv: Invocation, session_id: str) -> bool:
    """Whether a parked process holding ``session_id`` continues what ``inv`` asks for (same session, no fork)."""
    wanted = inv.resume.session_id if inv.resume is not None else ""
    return bool(wanted) and not inv.fork and session_id == wanted


async def close_quietly(proc: Closeable, grace: float) -> None:
    """Close ``proc`` within ``grace`` seconds, ignoring errors (used as a slot closer)."""
    with contextlib.suppress(Exception):
        await proc.close(grace)


async def shielded_close(proc: Closeable, grace: float) -> None:
    """Close ``proc`` even when the calling task is being cancelled (the cancellation is re-raised after)."""
    task = asyncio.get_running_loop().create_task(close_quietly(proc, grace))
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
        raise


__all__ = ["close_quietly", "continues_session", "parked", "shielded_close"]
