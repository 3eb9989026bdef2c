"""RunView: the anywidget that shows one run live and sends approvals and messages back."""

from __future__ import annotations

import asyncio
import os
import pathlib
import threading
from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from .._enums import Timing
from .._errors import AdaptorError
from .._events import Done, Event
from ._coalesce import DEFAULT_RATE, Coalescer
from ._model import TIMINGS, RunState, decision_outcome, now_ms
from ._static import StaticRun, footer_line, run_html, run_markdown

STATIC = pathlib.Path(__file__).parent / "static"
FULL_SYNC_EVERY = 2.0
"""Seconds between full state syncs while text streams; in between, updates carry only the appended text."""


class RunView(anywidget.AnyWidget):
    """A live view of one run; its final state stays in the widget so a saved notebook shows the finished run."""

    _esm = STATIC / "widget.js"
    _css = STATIC / "widget.css"

    header = traitlets.Dict().tag(sync=True)
    items: traitlets.List[Any] = traitlets.List().tag(sync=True)
    live = traitlets.Dict().tag(sync=True)
    messages: traitlets.List[Any] = traitlets.List().tag(sync=True)
    footer = traitlets.Dict().tag(sync=True)
    accepting = traitlets.Bool(False).tag(sync=True)
    server_ms = traitlets.Int(0).tag(sync=True)

    def __init__(
        self,
        *,
        driver: str,
        model: str = "",
        thread: str = "",
        note: str = "",
        messaging: bool = True,
        rate: float = DEFAULT_RATE,
        loop: asyncio.AbstractEventLoop | None = None,
        approval_note: str = "",
    ) -> None:
        super().__init__()
        self._state = RunState(
            driver=driver, model=model, thread=thread, note=note, messaging=messaging, approval_note=approval_note
        )
        self._lock = threading.RLock()
        self._loop = loop or asyncio.get_running_loop()
        self._coalescer = Coalescer(self._loop, self._flush, rate)
        self._stream: Any = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self.sends = 0
        self.rendered = False
        self._last_full = float("-inf")
        self._changed = asyncio.Event()
        self.on_msg(self._on_custom)
        self._flush()

    # -- state -----------------------------------------------------------------------------------------------

    @property
    def state(self) -> RunState:
        """The view's state model (read it under no particular lock; it is for tests and tools)."""
        return self._state

    @property
    def flushes(self) -> int:
        """How many state updates were sent to the front end."""
        return self.sends

    def attach(self, stream: Any) -> None:
        """Bind the Stream that messages typed in the view go to."""
        self._stream = stream

    def apply(self, event: Event) -> None:
        """Fold an event into the view; the front end gets it at the next coalesced update."""
        with self._lock:
            self._state.apply(event)
        self._coalescer.mark()

    def _flush(self) -> None:
        """Send what changed as one comm message: appended text only, or a full state update."""
        now = self._loop.time()
        with self._lock:
            if self._state.only_appends() and now - self._last_full < FULL_SYNC_EVERY:
                appends = self._state.take_appends()
                changes = None
            else:
                changes = self._state.snapshot()
        if changes is None:
            if appends:
                self.send({"type": "append", "items": appends})
                self.sends += 1
                self._changed.set()
            return
        if not changes:
            return
        with self.hold_sync():
            for name, value in changes.items():
                setattr(self, name, value)
            self.server_ms = now_ms()
        self._last_full = now
        self.sends += 1
        self._changed.set()

    async def until(self, predicate: Callable[[RunView], Any]) -> Any:
        """Wait (on the view's loop) until ``predicate(view)`` is truthy after an update; returns its value."""
        while True:
            value = predicate(self)
            if value:
                return value
            self._changed.clear()
            await self._changed.wait()

    async def consume(self, stream: Any) -> Done:
        """Read every event of ``stream`` into the view and return its Done."""
        self.attach(stream)
        done: Done | None = None
        state, lock, mark = self._state, self._lock, self._coalescer.mark  # what apply() does, without its call
        async for batch in stream.event_batches(merge_text=True):
            i, stop = 0, len(batch)
            while i < stop:
                i = state.stream_texts(batch, i)  # streamed text needs no lock (see RunState.stream_text)
                if i < stop:
                    event = batch[i]
                    with lock:
                        state.apply(event)
                    if isinstance(event, Done):
                        done = event
                    i += 1
            mark()
        if done is None:
            done = Done(result=None, err=RuntimeError("the event stream ended without Done"))
            self.apply(done)
        await self.finish()
        return done

    async def finish(self) -> None:
        """Send the final state now (respecting the update spacing)."""
        await self._coalescer.drain()

    def fail(self, err: BaseException) -> None:
        """Show a failure that happened outside the event stream (for example while starting)."""
        with self._lock:
            self._state.finish(None, err)
        self._coalescer.mark()

    def close_updates(self) -> None:
        """Stop scheduled updates (the view keeps its last state)."""
        self._coalescer.close()

    # -- messages from the front end -------------------------------------------------------------------------

    def _on_custom(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        if kind == "approval":
            self.handle_approval(content)
        elif kind == "message":
            self.handle_message(content)
        elif kind == "rendered":
            self.rendered = True

    def has_front_end(self) -> bool:
        """True when a front end showed this view, or the kernel belongs to a Jupyter server session."""
        return self.rendered or bool(os.environ.get("JPY_SESSION_NAME"))

    def final_display(self) -> Any:
        """What the cell's output holds once the run ends.

        The view with its static form; or the static form alone when no front end ever showed the view (nbclient,
        nbconvert, nbval, papermill), so exports and saved notebooks do not depend on widget state.
        """
        return self if self.has_front_end() else StaticRun(self.static_bundle())

    def handle_approval(self, content: dict[str, Any]) -> None:
        """Apply an Approve / Deny / Answer click exactly once; safe from any thread."""
        request_id = str(content.get("request_id", ""))
        action = content.get("action")
        with self._lock:
            request = self._state.approvals.get(request_id)
        error = ""
        if request is None:
            error = "this request is not live any more"
        else:
            try:
                if action == "approve":
                    request.approve()
                elif action == "deny":
                    request.deny(str(content.get("reason") or "denied in the notebook"))
                elif action == "answer":
                    request.answer(str(content.get("answer") or ""))
                else:
                    error = f"unknown action {action!r}"
            except AdaptorError as exc:
                error = str(exc)
        with self._lock:
            self._state.settle_approval(request_id, error)
            item = self._state.approval_item(request_id)
            if item is not None and request is not None and request.state != "pending":
                item["state"], item["outcome"] = decision_outcome(request.decision)
        self._coalescer.mark()

    def handle_message(self, content: dict[str, Any]) -> None:
        """Admit a message typed in the view into the running Stream; safe from any thread."""
        message_id = str(content.get("id") or "")
        text = str(content.get("text") or "")
        when = str(content.get("when") or "soon")
        if not message_id or not text.strip():
            return
        with self._lock:
            self._state.add_message(message_id, text, when if when in TIMINGS else "soon")
            live = self._state.accepting and self._stream is not None
        self._coalescer.mark()
        if not live:
            self._message_done(message_id, "the run is not accepting messages")
            return
        timing = getattr(Timing, TIMINGS.get(when, "SOON"))
        self._run_on_loop(lambda: self._send_message(message_id, text, timing))

    async def _send_message(self, message_id: str, text: str, timing: Timing) -> None:
        try:
            await self._stream.send(text, id=message_id, when=timing)
        except AdaptorError as exc:
            self._message_done(message_id, str(exc))
        else:
            self._message_done(message_id, "")

    def _message_done(self, message_id: str, error: str) -> None:
        with self._lock:
            self._state.message_result(message_id, error)
        self._coalescer.mark()

    def _run_on_loop(self, factory: Callable[[], Any]) -> None:
        def start() -> None:
            task = asyncio.ensure_future(factory())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            start()
        else:
            self._loop.call_soon_threadsafe(start)

    # -- reprs -----------------------------------------------------------------------------------------------

    def static_bundle(self) -> dict[str, str]:
        """The run as escaped HTML, markdown and plain text (what a saved notebook or an export shows)."""
        with self._lock:
            st = self._state
            live = {i["id"]: st.live_text(i["id"]) for i in st.items if not i.get("text")}
            parts = (
                dict(st.header),
                [dict(i) for i in st.items],
                live,
                [dict(m) for m in st.messages],
                dict(st.footer),
            )
            final = "\n".join(
                i["text"] or live.get(i["id"], "") for i in st.items if i["kind"] == "text" and i["role"] == "assistant"
            )
        plain = repr(self)
        if not st.finished:
            final = ""
        if final:
            plain += "\n" + final
        line = footer_line(parts[0], parts[4]) if st.finished else ""
        if line:
            plain += "\n" + line
        return {"text/html": run_html(*parts), "text/markdown": run_markdown(*parts), "text/plain": plain}

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The live widget for a running kernel, beside the static run for everything else."""
        bundle = super()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict):
            data.update(self.static_bundle())
        return bundle

    def __repr__(self) -> str:
        h = self._state.header
        parts = [f"driver={h['driver']!r}"]
        if h.get("model"):
            parts.append(f"model={h['model']!r}")
        if h.get("thread"):
            parts.append(f"thread={h['thread']!r}")
        text = f"RunView({', '.join(parts)})"
        if h.get("note"):
            text += f"  [{h['note']}]"
        return text
