"""Per-Agent provider process slots: one reusable process per thread key."""

from __future__ import annotations

import asyncio

from ..driver._spi import ProcessSlot


class ProcessSlots:
    """The process slots of one Agent, keyed by thread key."""

    def __init__(self, owner: str) -> None:
        self._owner = owner
        self._slots: dict[str, ProcessSlot] = {}

    def slot_for(self, key: str) -> ProcessSlot:
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = ProcessSlot(f"{self._owner}/{key}")
        return slot

    async def close(self, key: str) -> None:
        slot = self._slots.pop(key, None)
        if slot is not None:
            await slot.close()

    async def close_all(self, timeout: float) -> list[str]:
        """Close every slot; a slot whose close fails or times out is kept for a later retry and named in the result."""
        failures: list[str] = []
        for key, slot in list(self._slots.items()):
            try:
                await asyncio.wait_for(slot.close(), timeout)
            except Exception as exc:  # kept for a later close(); the other slots are still closed
                failures.append(f"the process of thread {key!r}: {describe_failure(exc, timeout)}")
            else:
                if self._slots.get(key) is slot:
                    del self._slots[key]
        return failures


def describe_failure(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, TimeoutError):
        return f"timed out after {timeout:g} s"
    return f"{type(exc).__name__}: {exc}"
