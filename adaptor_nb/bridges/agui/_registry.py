"""RunRegistry: which Stream is active for each Thread key, and how AG-UI input reaches it."""

from __future__ import annotations

import threading
from typing import Any, Unpack

from ag_ui.core import RunAgentInput

from ..._core._options import SendOptions
from ..._enums import AuthorKind, MessageFailure, Timing
from ..._errors import MessageError, RunFinishedError
from ..._policy import Author
from ..._stream import Stream
from ..._thread import Thread
from ._input import UserText, latest_user_message

_HUMAN = Author(kind=AuthorKind.HUMAN)
# Options that describe the message itself; every other option configures a new execution.
_MESSAGE_OPTIONS = ("id", "author", "when")


class RunRegistry:
    """The active Stream of each Thread key, safe for concurrent callers (any task, any thread); usable as built.

    ``send`` starts ``Thread.send`` when the thread is idle and supplements the active run otherwise. The caller that
    started a run (``send`` returned ``supplemented=False``) is its creator: it alone drains the Stream and calls
    ``forget`` when the run is over.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active: dict[str, Stream] = {}
        self._thread_ids: dict[str, str] = {}

    def active(self, key: str) -> Stream | None:
        """The running Stream registered for ``key``, or None."""
        with self._lock:
            stream = self._active.get(key)
        return stream if stream is not None and not stream.done else None

    def thread_id(self, key: str) -> str | None:
        """The AG-UI ``threadId`` that input for ``key`` carried, if this registry has seen it."""
        with self._lock:
            return self._thread_ids.get(key)

    async def send(
        self, thread: Thread, input: RunAgentInput, **call_options: Unpack[SendOptions]
    ) -> tuple[Stream, bool]:
        """Start a run of ``thread`` with the latest user message of ``input``, or add that message to the active run.

        Returns ``(stream, supplemented)``. A supplement is a human message with timing SOON whose id is the AG-UI
        message id; its receipts (MessageUpdate) arrive on the active run's own event stream. ``call_options`` apply
        only when a run is started. Raises MessageError when ``input`` has no user message or the message is refused.
        """
        message = _require_message(input)
        key = thread.key
        while True:
            with self._lock:
                self._thread_ids.setdefault(key, input.thread_id)
                current = self._active.get(key)
                if current is None or current.done:
                    options: dict[str, Any] = dict(call_options)
                    options.setdefault("id", message.id)
                    stream = thread.send(message.text, **options)
                    self._active[key] = stream
                    return stream, False
            try:
                await _supplement(current, message)
            except RunFinishedError:
                continue  # the run ended meanwhile: start the next one
            return current, True

    async def send_active(self, key: str, input: RunAgentInput) -> Stream:
        """Add the latest user message of ``input`` to the active run of ``key``; never starts a run.

        Raises RunFinishedError (a MessageError) when ``key`` has no active run. Cancelling the caller while the
        message waits for queue space withdraws it.
        """
        message = _require_message(input)
        current = self.active(key)
        if current is None:
            raise RunFinishedError(
                f"thread {key!r} has no active run: start one with send()",
                id=message.id,
                text=message.text,
                reason=MessageFailure.RUN_FAILED,
            )
        with self._lock:
            self._thread_ids.setdefault(key, input.thread_id)
        await _supplement(current, message)
        return current

    def forget(self, key: str, stream: Stream) -> None:
        """Drop ``stream`` as the active run of ``key`` (a no-op when another run is registered there)."""
        with self._lock:
            if self._active.get(key) is stream:
                del self._active[key]


def _require_message(input: RunAgentInput) -> UserText:
    message = latest_user_message(input)
    if message is None:
        raise MessageError("the AG-UI input has no user message with text")
    return message


async def _supplement(stream: Stream, message: UserText) -> None:
    await stream.send(message.text, id=message.id, author=_HUMAN, when=Timing.SOON)
