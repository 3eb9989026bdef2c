"""Per-Agent provider process slots: one reusable process per thread key."""

from __future__ import annotations

import asyncio
import contextlib

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

    async def close_all(self, timeout: float) -> None:
        slots, self._slots = list(self._slots.values()), {}
        for slot in slots:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(slot.close(), timeout)
