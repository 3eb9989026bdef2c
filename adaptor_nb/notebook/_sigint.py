"""Ctrl-C in terminal IPython: cancel the waiting cell instead of breaking out of the event loop.

Outside a kernel, SIGINT raises KeyboardInterrupt wherever the main thread is, which is nearly always the event
loop's ``select``: the exception leaves ``run_until_complete`` with the cell's task still pending, so the run is
never cancelled, its CLI keeps running and its Thread stays busy. While an ``%%agent`` cell waits there, the first
Ctrl-C cancels the cell's task instead (the cell then cancels its run and raises KeyboardInterrupt); a second
Ctrl-C raises at once, as usual. And since nothing runs that loop between cells, the cell first waits (bounded)
for the work the interrupt set off: the run's end, and its provider process settled idle or stopped.
In a kernel, whose loop keeps running and whose interrupts already reach the cell, nothing changes.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from types import FrameType, TracebackType
from typing import Any

SETTLE_TIMEOUT = 30.0
"""Seconds the work an interrupt set off gets to finish before a terminal prompt returns anyway."""


class TerminalInterrupts:
    """A context for an ``%%agent`` cell's wait (a run's or a ``--map`` batch's): Ctrl-C cancels the cell's task,
    then ``settle`` waits for the cancellation's follow-up tasks. Does nothing in a kernel, off the main thread,
    or when SIGINT has a handler other than Python's default."""

    def __init__(self, shell: Any) -> None:
        self._terminal = getattr(shell, "kernel", None) is None
        self._before: set[asyncio.Task[Any]] | None = None  # the loop's tasks when Ctrl-C came
        self._handler: Any = None

    def __enter__(self) -> TerminalInterrupts:
        task = asyncio.current_task()
        if (
            not self._terminal
            or task is None
            or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        ):
            return self
        loop = task.get_loop()

        def cancel(signum: int, frame: FrameType | None) -> None:
            signal.signal(signal.SIGINT, signal.default_int_handler)  # a second Ctrl-C raises at once
            self._before = set(asyncio.all_tasks(loop))
            loop.call_soon_threadsafe(task.cancel)

        self._handler = cancel
        signal.signal(signal.SIGINT, cancel)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._handler is not None and signal.getsignal(signal.SIGINT) is self._handler:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        self._handler = None

    async def settle(self, stream: Any = None) -> None:
        """Outside a kernel, wait until the interrupted run (``stream``'s, if given) has ended and the tasks started
        since Ctrl-C (a provider process being settled or stopped) are done, at most ``SETTLE_TIMEOUT`` seconds."""
        if not self._terminal:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SETTLE_TIMEOUT
        current = asyncio.current_task()
        run = getattr(getattr(stream, "_ex", None), "task", None)
        while True:
            pending: set[asyncio.Future[Any]] = set()
            if isinstance(run, asyncio.Future) and not run.done():
                pending.add(run)
            if self._before is not None:
                pending |= {t for t in asyncio.all_tasks(loop) if t not in self._before and t is not current}
            left = deadline - loop.time()
            if not pending or left <= 0:
                return
            await asyncio.wait(pending, timeout=left)
