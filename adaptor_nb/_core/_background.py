"""The one background event loop that synchronous callers share (``run_sync``, ``Agent.run_sync``).

The loop runs in a daemon thread for the life of the process, so a Thread's persistent provider process survives
from one synchronous call to the next. Every Engine that starts a run on this loop is noted; at interpreter exit
each one still open is closed on the loop (reaping its processes) before the loop stops.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextvars
import inspect
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

EXIT_TIMEOUT = 10.0  # seconds each open Engine gets to close at interpreter exit
INTERRUPT_TIMEOUT = 30.0  # seconds the runs of an interrupted call get to stop (their processes reaped)


class Cancellable(Protocol):
    """A run started inside a ``BackgroundLoop.run`` call."""

    @property
    def task(self) -> asyncio.Future[Any]: ...

    def cancel(self, cause: str = ...) -> None: ...


# The runs started inside the current ``BackgroundLoop.run`` call (None outside one): the Engine adds each run it
# starts, so an interrupted call cancels exactly its own runs, those of its child tasks (map_rows' rows) included.
STARTED: contextvars.ContextVar[list[Cancellable] | None] = contextvars.ContextVar("adaptor_nb_started", default=None)


class Closable(Protocol):
    """What the loop closes at exit (an Engine)."""

    closed: bool

    async def close(self, timeout: float) -> None: ...


class BackgroundLoop:
    """A lazily started event loop in a daemon thread, with the Engines that ran on it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._users: weakref.WeakSet[Any] = weakref.WeakSet()

    @property
    def started(self) -> bool:
        return self._loop is not None

    def loop(self) -> asyncio.AbstractEventLoop:
        """The shared loop, started on first use (and its exit hook registered then)."""
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=self._serve, args=(loop,), name="adaptor_nb-sync", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
                _register_exit(self.shutdown)
            return self._loop

    @staticmethod
    def _serve(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        loop.run_forever()

    def note(self, user: Closable) -> None:
        """Remember ``user`` for closing at exit when it runs on the shared loop (called by Engine.start)."""
        if self._loop is not None and asyncio.get_running_loop() is self._loop:
            self._users.add(user)

    def run(self, target: Callable[[], Any] | Awaitable[T], what: str = "run_sync()") -> T:
        """Run ``target`` on the shared loop and wait: an awaitable, or a zero-argument callable returning one
        (called inside the loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            if inspect.iscoroutine(target):
                target.close()  # never awaited: no "coroutine was never awaited" warning on top of the error
            raise RuntimeError(f"{what} cannot be used inside a running event loop; use `await` instead")
        if not callable(target) and not inspect.isawaitable(target):
            raise TypeError(
                f"{what} needs a coroutine, an async function or a zero-argument callable returning an awaitable, "
                f"got {type(target).__name__}"
            )

        started: list[Cancellable] = []

        async def main() -> T:
            STARTED.set(started)
            aw = target() if callable(target) else target
            if not inspect.isawaitable(aw):
                raise TypeError(f"{what}: the callable returned {type(aw).__name__}, not an awaitable")
            result: T = await aw
            return result

        future = asyncio.run_coroutine_threadsafe(main(), self.loop())
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            try:
                future.result()
            except (concurrent.futures.CancelledError, Exception):
                pass
            # The call's own runs are cancelled on the loop and their processes reaped before the interrupt goes
            # on: awaiting a Result does not own the run, so cancelling the waiter alone would leave it running.
            self._stop(started)
            raise

    def _stop(self, runs: list[Cancellable]) -> None:
        loop = self._loop
        if loop is None or not runs:
            return

        async def stop() -> None:
            for run in runs:
                run.cancel("interrupted (KeyboardInterrupt)")
            await asyncio.wait([run.task for run in runs], timeout=INTERRUPT_TIMEOUT)

        try:
            asyncio.run_coroutine_threadsafe(stop(), loop).result(INTERRUPT_TIMEOUT + 5.0)
        except (concurrent.futures.TimeoutError, KeyboardInterrupt, Exception):
            pass  # a second interrupt, or runs that would not stop: the interrupt goes on regardless

    def shutdown(self, timeout: float = EXIT_TIMEOUT) -> None:
        """Close every open Engine that ran here, then stop the loop and its thread. Idempotent."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        users = [u for u in list(self._users) if not u.closed]
        if users:

            async def close_all() -> None:
                await asyncio.gather(*(u.close(timeout) for u in users), return_exceptions=True)

            try:
                asyncio.run_coroutine_threadsafe(close_all(), loop).result(timeout + 5.0)
            except (concurrent.futures.TimeoutError, Exception):
                pass
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if not thread.is_alive():
            loop.close()


def _register_exit(hook: Callable[[], None]) -> None:
    """Run ``hook`` at exit before the standard thread pools shut down (the close may still need them)."""
    early = getattr(threading, "_register_atexit", None)
    if callable(early):
        try:
            early(hook)
            return
        except RuntimeError:  # already shutting down
            pass
    atexit.register(hook)


BACKGROUND = BackgroundLoop()
