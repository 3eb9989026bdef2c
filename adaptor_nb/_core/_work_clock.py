"""The clock of ``execution_timeout``: the run's time at work, which stands still while a person is being asked."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


class WorkClock:
    """Seconds a run has spent working: monotonic time, minus every span in which at least one approval or question
    waited for an answer (``hold()`` ... ``release()``, nested holds count once)."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._start = now()
        self._held = 0
        self._held_since = 0.0
        self._held_total = 0.0
        self._changed = asyncio.Event()

    @property
    def held(self) -> bool:
        return self._held > 0

    def elapsed(self) -> float:
        """Working seconds so far (frozen while held)."""
        now = self._held_since if self._held else self._now()
        return now - self._start - self._held_total

    def hold(self) -> None:
        """A person is being asked: stop the clock (until the matching ``release()``)."""
        if self._held == 0:
            self._held_since = self._now()
        self._held += 1
        self._changed.set()

    def release(self) -> None:
        """The answer came (or the question went away): the clock runs again once no hold is left."""
        if self._held == 0:
            return
        self._held -= 1
        if self._held == 0:
            self._held_total += self._now() - self._held_since
        self._changed.set()

    async def run_out(self, budget: float) -> None:
        """Return once ``budget`` working seconds have passed; waits without limit while the clock is held."""
        while True:
            self._changed.clear()
            if self._held:
                await self._changed.wait()
                continue
            remaining = budget - self.elapsed()
            if remaining <= 0:
                return
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                continue


__all__ = ["WorkClock"]
