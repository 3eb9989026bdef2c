"""Rate-limited flushing: many state changes become at most ``rate`` sends per second, spaced evenly."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

DEFAULT_RATE = 30.0


class Coalescer:
    """Calls ``flush`` on ``loop`` soon after ``mark()``, never twice within ``1 / rate`` seconds."""

    def __init__(self, loop: asyncio.AbstractEventLoop, flush: Callable[[], None], rate: float = DEFAULT_RATE) -> None:
        if rate <= 0:
            raise ValueError(f"rate must be positive, got {rate!r}")
        self._loop = loop
        self._flush = flush
        self.interval = 1.0 / rate
        self._lock = threading.Lock()
        self._armed = False
        self._handle: asyncio.TimerHandle | None = None
        self._last = float("-inf")
        self._draining = False
        self.flushes = 0

    def mark(self) -> None:
        """Note that state changed; safe from any thread."""
        if self._armed:  # a flush is due; it clears the flag before it reads the state, so this change rides along
            return
        with self._lock:
            if self._armed:
                return
            self._armed = True
        if self._on_loop():
            self._arm()
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._arm)

    def _on_loop(self) -> bool:
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    def _arm(self) -> None:
        if self._handle is not None or self._draining:
            return
        delay = max(0.0, self._last + self.interval - self._loop.time())
        self._handle = self._loop.call_later(delay, self._fire)

    def _fire(self) -> None:
        self._handle = None
        with self._lock:
            self._armed = False
        self._last = self._loop.time()
        self.flushes += 1
        self._flush()

    async def drain(self) -> None:
        """Flush now (after the minimum spacing), whether or not a flush was pending; call on the loop."""
        with self._lock:
            self._armed = True  # marks made while draining ride along with the final flush
        self._draining = True
        try:
            if self._handle is not None:
                self._handle.cancel()
                self._handle = None
            wait = self._last + self.interval - self._loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            self._fire()
        finally:
            self._draining = False

    def close(self) -> None:
        """Cancel a pending flush."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
