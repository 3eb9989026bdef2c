"""BatchView: the anywidget that shows a ``map_rows`` batch live, takes approvals per row and retries failed rows."""

from __future__ import annotations

import asyncio
import contextlib
import html
import os
import pathlib
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets

from .._enums import ApprovalKind
from .._errors import AdaptorError
from .._views._coalesce import DEFAULT_RATE, Coalescer
from .._views._model import TRAITS, RunState, now_ms
from .._views._static import footer_line
from ._progress import Progress
from ._row import RowJob
from ._table import estimate, table_html, table_rows

if TYPE_CHECKING:
    from .._approvals import ApprovalRequest
    from ._map import Batch

STATIC = pathlib.Path(__file__).parent / "static"
MAX_FAILURES = 50
"""Failures listed in the view's table (the frame has them all)."""
TABLE_EVERY = 0.5
"""Seconds between result-table updates while rows finish (the counts go at the view's usual rate)."""


def tool_of(request: ApprovalRequest) -> str:
    """The tool a permission request is about ("" for other kinds)."""
    return str(request.details.get("tool") or request.details.get("tool_name") or "")


class ViewApprovals:
    """An ``on_approval`` handler that puts each request in the view with its row label and waits for a click.

    Tools approved with "approve all for this tool" (or named in ``approve_tools``) are approved at once for the
    rest of the batch. A request nobody answers follows the approval policy (its timeout and ``on_reject``).
    """

    def __init__(self, view: BatchView, approve_tools: Iterable[str] = ()) -> None:
        self.view = view
        self.tools: set[str] = set(approve_tools)

    async def __call__(self, request: ApprovalRequest) -> None:
        tool = tool_of(request)
        if request.kind is ApprovalKind.PERMISSION and tool and tool in self.tools:
            request.approve()
            return
        self.view._pending_add(request)
        try:
            await asyncio.Event().wait()  # the engine cancels this handler once the request is decided
        finally:
            self.view._pending_drop(request.id)


class BatchView(anywidget.AnyWidget):
    """Counts, cost, throughput, the slowest live row, failures with a retry button, approvals, one row's run."""

    _esm = STATIC / "batch.js"
    _css = STATIC / "batch.css"

    counts = traitlets.Dict().tag(sync=True)
    failures: traitlets.List[Any] = traitlets.List().tag(sync=True)
    approvals_pending: traitlets.List[Any] = traitlets.List().tag(sync=True)
    detail = traitlets.Dict().tag(sync=True)
    notice = traitlets.Unicode("").tag(sync=True)
    busy = traitlets.Unicode("").tag(sync=True)
    server_ms = traitlets.Int(0).tag(sync=True)
    rows: traitlets.List[Any] = traitlets.List().tag(sync=True)  # the result table, one entry per input row
    totals = traitlets.Dict().tag(sync=True)  # tokens so far, rows remaining, estimated time and cost to finish

    def __init__(
        self,
        *,
        driver: str,
        total: int,
        max_cost_usd: float | None = None,
        rate: float = DEFAULT_RATE,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__()
        self.driver = driver
        self.max_cost_usd = max_cost_usd
        self.progress = Progress(total=total)
        self.batch: Batch | None = None
        self._lock = threading.RLock()
        self._loop = loop or asyncio.get_running_loop()
        self._coalescer = Coalescer(self._loop, self._flush, rate)
        self._labels: dict[str, Any] = {}  # run id -> row label
        self._runs: dict[str, RunState] = {}  # str(label) -> the row's latest run
        self._requests: dict[str, tuple[ApprovalRequest, str, str]] = {}  # id -> (request, label, tool)
        self._handler: ViewApprovals | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self._changed = asyncio.Event()
        self._handle: Any = None
        self._slot: Any = None  # the output under the view where an opened row's run view goes
        self.row_view: tuple[str, Any] | None = None  # (label, RunView) of the opened row
        self.rendered = False
        self.sends = 0
        self.labels: list[Any] = []  # the input rows' labels, in order (set_labels)
        self._table_at = float("-inf")
        self.on_msg(self._on_custom)
        self._flush()

    def set_labels(self, labels: list[Any]) -> None:
        """The batch's input rows, in order: the result table has one entry per label."""
        self.labels = list(labels)
        self._table_at = float("-inf")
        self._coalescer.mark()

    # -- wiring ----------------------------------------------------------------------------------------------

    def approvals(self, approve_tools: Iterable[str] = ()) -> ViewApprovals:
        """The ``on_approval`` handler that routes this batch's requests here."""
        self._handler = ViewApprovals(self, approve_tools)
        return self._handler

    def follow(self, batch: Batch) -> None:
        """Show ``batch``'s progress (and retry its failed rows on a click)."""
        self.batch = batch
        self.progress = batch.progress
        batch.progress.listeners.append(lambda _p: self._coalescer.mark())
        self._coalescer.mark()

    def watch(self, job: RowJob, stream: Any) -> None:
        """Follow one row attempt's events (so a click can open its run); an InKernelExecutor ``on_stream`` hook."""
        state = RunState(driver=self.driver, thread=job.thread or "", note=f"row {job.label!r}", messaging=False)
        with self._lock:
            self._labels[stream.run_id] = job.label
            self._runs[str(job.label)] = state

        label = str(job.label)

        async def consume() -> None:
            with contextlib.suppress(Exception):
                async for event in stream.events():
                    with self._lock:
                        state.apply(event)
                        opened = self.row_view
                        if self._opened == label and self._runs.get(label) is state:
                            self._detail_due = True
                            self._coalescer.mark()
                    if opened is not None and opened[0] == label and opened[1].state is state:
                        opened[1]._coalescer.mark()

        self._spawn(consume())

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- approvals -------------------------------------------------------------------------------------------

    def _pending_add(self, request: ApprovalRequest) -> None:
        with self._lock:
            label = self._labels.get(request.run_id, "")
            self._requests[request.id] = (request, str(label), tool_of(request))
        self._coalescer.mark()

    def _pending_drop(self, request_id: str) -> None:
        with self._lock:
            self._requests.pop(request_id, None)
        self._coalescer.mark()

    def decide(self, request_id: str, action: str, reason: str = "") -> str:
        """Apply an approve / deny / approve_tool click; returns "" or why it could not be applied."""
        with self._lock:
            entry = self._requests.get(request_id)
        if entry is None:
            return "this request is not live any more"
        request, _label, tool = entry
        try:
            if action == "approve":
                request.approve()
            elif action == "deny":
                request.deny(reason or "denied in the batch view")
            elif action == "approve_tool":
                if not tool:
                    return "this request names no tool"
                if self._handler is not None:
                    self._handler.tools.add(tool)
                with self._lock:
                    same = [r for r, _lb, t in self._requests.values() if t == tool]
                for r in same:
                    with contextlib.suppress(AdaptorError):
                        r.approve()
            else:
                return f"unknown action {action!r}"
        except AdaptorError as exc:
            return str(exc)
        return ""

    # -- clicks ----------------------------------------------------------------------------------------------

    def _on_custom(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        if kind == "approval":
            action = str(content.get("action", ""))
            request_id = str(content.get("request_id", ""))
            self._on_loop(lambda: self._click_approval(request_id, action, str(content.get("reason") or "")))
        elif kind == "retry":
            self._on_loop(self._click_retry)
        elif kind == "open":
            label = str(content.get("label", ""))
            self._on_loop(lambda: self.open_row(label))
        elif kind == "close":
            self._on_loop(self.close_row)
        elif kind == "stop":
            self._on_loop(self._click_stop)
        elif kind == "rendered":
            self.rendered = True

    def _click_stop(self) -> None:
        """Stop the batch: no more rows start, live ones are cancelled, the rest are marked skipped."""
        if self.batch is not None:
            self.batch.cancel("stopped in the batch view")
            with self._lock:
                self._notice = "stopping: no more rows start; the rest are marked skipped"
            self._coalescer.mark()

    def _on_loop(self, action: Callable[[], None]) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            action()
        else:
            self._loop.call_soon_threadsafe(action)

    def _click_approval(self, request_id: str, action: str, reason: str) -> None:
        error = self.decide(request_id, action, reason)
        with self._lock:
            self._notice = error
        self._coalescer.mark()

    def _click_retry(self) -> None:
        if self.batch is None or self.busy:
            return
        self.busy = "retrying"
        self._spawn(self.retry())

    async def retry(self) -> None:
        """Re-run the batch's failed rows (what the "retry failed rows" button does)."""
        assert self.batch is not None
        self.busy = "retrying"
        error = ""
        try:
            await self.batch.retry_failed()
        except Exception as exc:
            error = f"retry failed: {type(exc).__name__}: {exc}"
        finally:
            self.busy = ""
            with self._lock:
                self._notice = error
            await self.finish()

    def open_row(self, label: str) -> None:
        """Open one row's run: its transcript, tool calls and approvals in the side panel beside the table (kept
        up to date while the row runs) and, under a live view, the row's own run view in the output below."""
        with self._lock:
            self._opened = label
            state = self._runs.get(label)
            if state is None:
                self.detail = {"label": label, "text": "no run recorded for this row (cached, skipped or remote)"}
                return
            self.detail = _detail(label, state)
        if self._slot is not None:
            self._slot.update(self._open_view(label, state))

    def close_row(self) -> None:
        """Close the side panel (what its close button does)."""
        with self._lock:
            self._opened = None
        self.detail = {}

    def _open_view(self, label: str, state: RunState) -> Any:
        """A RunView over the row's recorded state (the view already folded its events)."""
        from .._views._view import RunView

        if self.row_view is not None:
            if self.row_view[0] == label and self.row_view[1].state is state:
                return self.row_view[1]
            self.row_view[1].close_updates()
        view = RunView(driver=self.driver, messaging=False, loop=self._loop)
        with self._lock:
            view._lock = self._lock  # one lock: the batch view's consumer folds events into this state
            view._state = state
            state.dirty.update(TRAITS)
        view._flush()
        self.row_view = (label, view)
        return view

    # -- updates ---------------------------------------------------------------------------------------------

    _notice = ""
    _opened: str | None = None  # the label whose run the side panel shows
    _detail_due = False  # the opened row's run changed since the panel was last sent
    _in_kernel = False
    _final_shown = False

    def _flush(self) -> None:
        p = self.progress
        slow = p.slowest()
        with self._lock:
            pending = [
                {"id": rid, "label": label, "tool": tool, "title": r.title or r.kind.value, "kind": r.kind.value}
                for rid, (r, label, tool) in self._requests.items()
            ]
            notice = self._notice
            detail = None
            if self._detail_due and self._opened is not None and self._opened in self._runs:
                detail = _detail(self._opened, self._runs[self._opened])
            self._detail_due = False
        counts = {
            "total": p.total,
            "done": p.done,
            "cached": p.cached,
            "failed": p.failed,
            "skipped": p.skipped,
            "running": p.running,
            "queued": p.queued,
            "finished": p.finished,
            "cost_usd": round(p.cost_usd, 6),
            "max_cost_usd": self.max_cost_usd,
            "throughput": round(p.throughput, 2),
            "slowest": {"label": str(slow[0]), "seconds": round(slow[1], 1)} if slow else None,
            "driver": self.driver,
        }
        now = self._loop.time()
        table = self.labels and (now - self._table_at >= TABLE_EVERY or p.finished == p.total)
        with self.hold_sync():
            self.counts = counts
            self.failures = [{"label": str(lb), "error": err} for lb, err in p.failures[:MAX_FAILURES]]
            self.approvals_pending = pending
            self.notice = notice
            if detail is not None:
                self.detail = detail
            if table:  # the table is the big part of an update: it goes at most every TABLE_EVERY seconds
                self.rows = table_rows(self.labels, p)
                self.totals = estimate(p)
                self._table_at = now
            self.server_ms = now_ms()
        self.sends += 1
        self._changed.set()

    async def until(self, predicate: Callable[[BatchView], Any]) -> Any:
        """Wait (on the view's loop) until ``predicate(view)`` is truthy after an update; returns its value."""
        while True:
            value = predicate(self)
            if value:
                return value
            self._changed.clear()
            await self._changed.wait()

    async def finish(self) -> None:
        """Send the final counts now (respecting the update spacing), and refresh a displayed static form."""
        await self._coalescer.drain()
        if self._handle is not None:
            self._handle.update(self.final_display())
        elif self._in_kernel and not self._final_shown:
            # headless runners (nbclient, nbval) get one static output, the same every time
            import IPython.display

            display: Any = IPython.display.display
            display(self.final_display())
            self._final_shown = True

    # -- display ---------------------------------------------------------------------------------------------

    def has_front_end(self) -> bool:
        return self.rendered or bool(os.environ.get("JPY_SESSION_NAME"))

    def show(self) -> None:
        """In a notebook kernel: display the live view now when a front end can show it, else the summary at the end."""
        from .._views._frontend import in_kernel, kernel_front_end

        if not in_kernel():
            return
        self._in_kernel = True
        if kernel_front_end():
            import IPython.display

            display: Any = IPython.display.display
            self._handle = display(self, display_id=True)
            self._slot = display(_Static({"text/plain": ""}), display_id=True)

    def final_display(self) -> Any:
        """The view beside its static form, or the static form alone when no front end ever showed it."""
        return self if self.has_front_end() else _Static(self.static_bundle())

    def static_bundle(self) -> dict[str, str]:
        """The summary and the result table as escaped HTML, and plain text (what a saved or exported notebook
        shows)."""
        page = summary_html(self.progress)
        if self.labels:
            page = page[: -len("</div>")] + table_html(self.labels, self.progress) + "</div>"
        return {"text/html": page, "text/plain": summary_text(self.progress)}

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict):
            data.update(self.static_bundle())
        return bundle

    def __repr__(self) -> str:
        return f"BatchView({self.progress.summary()})"


class _Static:
    """A fixed mime bundle (the view's static form)."""

    def __init__(self, bundle: dict[str, str]) -> None:
        self.bundle = bundle

    def _repr_mimebundle_(self, **_kwargs: Any) -> dict[str, str]:
        return self.bundle

    def __repr__(self) -> str:
        return self.bundle["text/plain"]


def _detail(label: str, state: RunState) -> dict[str, Any]:
    """The side panel's content for one row's run."""
    entries = run_entries(state)
    return {"label": label, "text": "\n".join(e["text"] for e in entries), "entries": entries}


def run_entries(state: RunState) -> list[dict[str, str]]:
    """One row's run as entries of plain text (the front end shows each as a text node), each with its kind:
    ``head`` (driver, state, error), ``text`` (the transcript), ``tool`` (a call and its result), ``approval``,
    ``other`` and ``foot`` (time, tokens, cost)."""
    header, footer = dict(state.header), dict(state.footer)
    out = [{"kind": "head", "text": f"{header.get('driver', '')} · {header.get('state', '')}"}]
    if header.get("error"):
        out.append({"kind": "head", "text": str(header["error"])})
    for item in state.items:
        kind = item.get("kind")
        text = str(item.get("text") or state.live_text(item["id"]))
        if kind == "text":
            out.append({"kind": "text", "text": ("you: " if item.get("role") == "user" else "") + text})
        elif kind == "tool":
            line = f"[{item.get('name') or 'tool'} · {item.get('state', '')}] {text}"
            out.append({"kind": "tool", "text": line + (f"\n  -> {item['result']}" if item.get("result") else "")})
        elif kind == "approval":
            line = f"[approval] {item.get('title', '')} · {item.get('outcome') or item.get('state', '')}"
            out.append({"kind": "approval", "text": line})
        else:
            out.append({"kind": "other", "text": f"[{kind}] {text}"})
    end = footer_line(header, footer)
    if end:
        out.append({"kind": "foot", "text": end})
    return out


def summary_text(p: Progress) -> str:
    """The batch in plain text: the counts line, then one line per failure."""
    lines = [p.summary()]
    lines += [f"  failed {label!r}: {error}" for label, error in p.failures[:MAX_FAILURES]]
    return "\n".join(lines)


def summary_html(p: Progress) -> str:
    """The batch as escaped HTML: counts, cost and the failures table (row labels and errors are data)."""
    e = html.escape
    parts = [
        '<div class="anb-batch-static" style="font-family:sans-serif;font-size:13px;border:1px solid #ddd;'
        'border-radius:6px;padding:6px 10px">',
        f"<div><strong>batch</strong> {e(p.summary())}</div>",
    ]
    if p.failures:
        parts.append('<table style="border-collapse:collapse;margin-top:4px"><tr><th>row</th><th>error</th></tr>')
        for label, error in p.failures[:MAX_FAILURES]:
            parts.append(f"<tr><td><code>{e(str(label))}</code></td><td>{e(error)}</td></tr>")
        parts.append("</table>")
    parts.append("</div>")
    return "".join(parts)
