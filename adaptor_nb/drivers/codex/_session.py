"""Drives the turns of one invocation on a loaded Codex thread: notifications, approvals and supplemental input."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from ...driver import (
    ApprovalSpec,
    Boundary,
    ClaimedMessage,
    DriverFailure,
    Event,
    EventMeta,
    EventSourceMeta,
    FailureReason,
    HostedTools,
    ImageInput,
    Notice,
    NoticeKind,
    ProcessInfo,
    ProcessKind,
    RunContext,
    TranscriptItem,
    Usage,
    mark_host_tool,
)
from ._approvals import (
    ELICITATION_REQUEST,
    USER_INPUT_REQUEST,
    approval_answer,
    approval_spec,
    declined_question,
    is_approval,
)
from ._config import give_up_reconnecting, reconnect_watch
from ._process import AppServer
from ._rpc import (
    METHOD_NOT_FOUND,
    Closed,
    Garbage,
    Inbound,
    Notification,
    RpcError,
    ServerClosedError,
    ServerRequest,
    Wakeup,
)
from ._translate import TurnMapper, as_dict

STDERR_TAIL_CHARS = 4000
# Codex error kinds worth retrying later (the provider was busy or the connection dropped).
RETRYABLE_ERRORS = frozenset(
    {
        "internalServerError",
        "httpConnectionFailed",
        "responseStreamConnectionFailed",
        "responseStreamDisconnected",
        "responseTooManyFailedAttempts",
        "rateLimitExceeded",
    }
)
IN_TURN_BOUNDARIES = frozenset({Boundary.IN_RUN, Boundary.INTERRUPT})


def text_input(text: str) -> dict[str, Any]:
    """A text item of ``turn/start`` / ``turn/steer`` input."""
    return {"type": "text", "text": text, "text_elements": []}


def image_input(image: ImageInput) -> dict[str, Any]:
    """An image item of ``turn/start`` input: the bytes as a ``data:`` URL (no file to write or remove)."""
    return {"type": "image", "url": image.data_url()}


class TurnRunner:
    """Runs turns until the agent is done: starts each turn, maps its notifications, answers approvals,
    steers or interrupts with supplemental messages, and continues with turn-end input.

    ``settings`` (model, effort, sandbox, approval policy, service tier) persist in the Codex thread, so a turn
    sends only those that differ from what the thread holds; ``output_schema`` goes with every turn of the run.
    """

    def __init__(
        self,
        server: AppServer,
        ctx: RunContext,
        settings: dict[str, Any],
        *,
        output_schema: dict[str, Any] | None = None,
        idle_timeout: float | None = None,
        connect_timeout: float | None = None,
        hosted: HostedTools | None = None,
    ) -> None:
        self.hosted = hosted
        self.server = server
        self.rpc = server.rpc
        self.ctx = ctx
        self.settings = settings
        self.output_schema = output_schema
        self.idle_timeout = idle_timeout
        self.connect_timeout = connect_timeout
        self._retrying: tuple[float, str] | None = None  # (loop time of the first retry notice, its text)
        self.mapper = TurnMapper()
        self.source_meta: EventMeta | None = None
        self.text = ""
        self.usage: Usage | None = None
        self.turn_id = ""
        self._approvals: dict[str, asyncio.Task[None]] = {}
        self._interrupt_batch: list[ClaimedMessage] = []
        self._interrupting = False
        self._steering = True
        self._cancelled_by_decision = False
        self._rearm = asyncio.Event()
        self._watcher: asyncio.Task[None] | None = None

    # -- the loop ----------------------------------------------------------------------------------------

    async def run(self, prompt: str, images: tuple[ImageInput, ...] = ()) -> None:
        """Run the first turn with ``prompt`` (after its ``images``) and every continuation the queued messages ask
        for."""
        inputs = [prompt]
        batch: list[tuple[ClaimedMessage, Boundary, str]] = []
        try:
            while True:
                await self._start_turn(inputs, batch, images)
                images = ()
                turn = await self._pump()
                batch = await self._finish_turn(turn)
                if not batch:
                    return
                inputs = [m.text for m, _, _ in batch]
        finally:
            await self._stop_helpers()

    async def _start_turn(
        self,
        inputs: list[str],
        batch: list[tuple[ClaimedMessage, Boundary, str]],
        images: tuple[ImageInput, ...] = (),
    ) -> None:
        changed = self.server.changed_settings(self.settings)
        items = [*(image_input(i) for i in images), *(text_input(t) for t in inputs)]
        params = {"threadId": self.server.thread_id, "input": items, **changed}
        if self.output_schema is not None:
            params["outputSchema"] = self.output_schema  # applies to one turn only
        self._drop_stale_turn_ends()
        try:
            result = await self.rpc.request("turn/start", params, timeout=self.idle_timeout)
        except (RpcError, ServerClosedError, TimeoutError) as exc:
            port = self.ctx.messages
            if port is not None:
                for m, _, _ in batch:
                    port.requeue(m, possible_duplicate=isinstance(exc, ServerClosedError))
            why = (
                f"no answer within {self.idle_timeout:g} s (Config.idle_timeout)"
                if isinstance(exc, TimeoutError)
                else exc
            )
            raise self._failure(f"Codex did not start the turn: {why}", exc) from None
        self.server.applied.update(changed)
        turn = as_dict(result.get("turn")) if isinstance(result, dict) else {}
        turn_id = turn.get("id")
        if not isinstance(turn_id, str) or not turn_id:
            raise DriverFailure(
                f"Codex answered turn/start without a turn id ({turn_id!r}); its turn events cannot be matched",
                details={"stderr_tail": self._tail()},
                session_id=self.server.thread_id,
            )
        self.turn_id = turn_id
        self.mapper.begin_turn(self.turn_id)
        self.ctx.set_turn_id(self.turn_id)
        # One meta per provider turn, shared by its events: the broker keeps the source when it stamps them.
        self.source_meta = EventMeta(source=EventSourceMeta(thread_id=self.server.thread_id, turn_id=self.turn_id))
        port = self.ctx.messages
        if port is not None:
            for m, boundary, mechanism in batch:
                port.delivered(m, boundary=boundary, mechanism=mechanism)
        self._interrupting = False
        self._steering = True
        if port is not None:
            self._rearm.set()
            if self._watcher is None:
                self._watcher = asyncio.get_running_loop().create_task(self._watch_messages())

    def _drop_stale_turn_ends(self) -> None:
        """Drop ``turn/completed`` notifications that arrived before this turn was asked for: never this turn's end."""
        inbound = self.rpc.inbound
        kept = [inbound.get_nowait() for _ in range(inbound.qsize())]
        for item in kept:
            if not (isinstance(item, Notification) and item.method == "turn/completed"):
                inbound.put_nowait(item)

    async def _finish_turn(self, turn: dict[str, Any]) -> list[tuple[ClaimedMessage, Boundary, str]]:
        raw_status = turn.get("status")
        status = raw_status if isinstance(raw_status, str) else ""
        self.ctx.terminal("turn/completed", turn)
        state = self.mapper.state
        if status == "failed":
            error = as_dict(turn.get("error")) or state.error or {}
            info = error.get("codexErrorInfo")
            kind = info if isinstance(info, str) else next(iter(info), "") if isinstance(info, dict) else ""
            raise DriverFailure(
                f"the Codex turn failed: {error.get('message') or 'no error message'}",
                details={"turn_id": self.turn_id, "codex_error": kind, "error": error, "stderr_tail": self._tail()},
                session_id=self.server.thread_id,
                retryable=kind in RETRYABLE_ERRORS,
            )
        if status == "interrupted" and not self._interrupting:
            reason = FailureReason.APPROVAL_DENIED if self._cancelled_by_decision else FailureReason.CANCELLED
            why = "an approval was answered with cancel" if self._cancelled_by_decision else "Codex interrupted it"
            raise DriverFailure(
                f"the Codex turn was interrupted: {why}",
                reason=reason,
                details={"turn_id": self.turn_id, "stderr_tail": self._tail()},
                session_id=self.server.thread_id,
            )
        if status != "completed" and status not in ("interrupted",):
            raise DriverFailure(
                f"the Codex turn ended with an unknown status {raw_status!r}",
                details={"turn_id": self.turn_id, "status": repr(raw_status)[:200], "stderr_tail": self._tail()},
                session_id=self.server.thread_id,
            )
        self.text = state.text
        self.usage = Usage.add(self.usage, state.usage)
        more = await self.ctx.turn_end(usage=state.usage, text=state.text)
        port = self.ctx.messages
        batch: list[tuple[ClaimedMessage, Boundary, str]] = []
        interrupting, self._interrupt_batch = self._interrupt_batch, []
        if port is None:
            return batch
        if not more:
            for m in interrupting:
                port.requeue(m)
            return batch
        batch += [(m, Boundary.INTERRUPT, "turn/interrupt") for m in interrupting]
        batch += [(m, Boundary.INTERRUPT, "turn/start") for m in port.claim(Boundary.INTERRUPT)]
        batch += [(m, Boundary.TURN_END, "turn/start") for m in port.claim(Boundary.TURN_END)]
        return batch

    async def _next(self) -> Inbound:
        if self._retrying is not None and self.connect_timeout is not None:
            left = self._retrying[0] + self.connect_timeout - asyncio.get_running_loop().time()
            with contextlib.suppress(TimeoutError):
                return await asyncio.wait_for(self.rpc.inbound.get(), max(left, 0.0))
            raise give_up_reconnecting(self.connect_timeout, self._retrying[1], self._tail())
        if self.idle_timeout is None or self._approvals:
            return await self.rpc.inbound.get()
        try:
            return await asyncio.wait_for(self.rpc.inbound.get(), self.idle_timeout)
        except TimeoutError:
            raise DriverFailure(
                f"codex app-server sent nothing for {self.idle_timeout:g} s (Config.idle_timeout)",
                details={"turn_id": self.turn_id, "stderr_tail": self._tail()},
                retryable=True,
            ) from None

    async def _pump(self) -> dict[str, Any]:
        """Handle inbound traffic until this turn's ``turn/completed``; returns its turn object."""
        thread_id = self.server.thread_id
        while True:
            item = await self._next()
            if isinstance(item, Notification):
                params = item.params
                if params.get("threadId", thread_id) != thread_id:
                    continue
                if item.method == "turn/completed":
                    turn = as_dict(params.get("turn"))
                    # Only this turn's end counts: a stale or id-less turn/completed is never taken for it.
                    if self.turn_id and turn.get("id") == self.turn_id:
                        return turn
                    continue
                if item.method == "serverRequest/resolved":
                    self._withdraw(params.get("requestId"))
                    continue
                try:
                    outs = list(self.mapper.map(item.method, params))
                except Exception as exc:  # a notification with wrong-typed fields is reported and skipped
                    outs = [_unreadable(item.method, exc)]
                for out in outs:
                    await self._publish(out)
            elif isinstance(item, ServerRequest):
                await self._server_request(item)
            elif isinstance(item, Wakeup):
                await self._wakeup(item)
            elif isinstance(item, Garbage):
                text = item.line[:4096].decode("utf-8", "replace")
                await self.ctx.emit(
                    ProcessInfo(kind=ProcessKind.STDOUT, text=text, bytes=item.line[:4096], data={"json": False})
                )
                await self.ctx.emit(
                    Notice(
                        kind=NoticeKind.LIFECYCLE.value,
                        text="codex app-server wrote a line that is not JSON-RPC; it was skipped",
                        metadata={"code": "codex_unparseable_line"},
                        data={"line": text[:2000]},
                    )
                )
            elif isinstance(item, Closed):
                pid = self.server.pid
                self.server.exit_reported = True
                await self.ctx.emit(
                    ProcessInfo(kind=ProcessKind.EXIT, data={"returncode": item.returncode, "pid": pid})
                )
                raise DriverFailure(
                    f"codex app-server {item.reason or 'exited during a turn'} (exit code {item.returncode})",
                    reason=FailureReason.INFRASTRUCTURE,
                    details={"turn_id": self.turn_id, "exit_code": item.returncode, "stderr_tail": self._tail()},
                    session_id=thread_id,
                    retryable=not item.reason,
                )

    async def _publish(self, out: Event | TranscriptItem) -> None:
        if self.connect_timeout is not None:
            self._retrying = reconnect_watch(self._retrying, out, asyncio.get_running_loop().time())
        if isinstance(out, TranscriptItem):
            self.ctx.transcript(out)
        else:
            out = mark_host_tool(out, self.hosted)
            meta = self.source_meta
            if meta is not None and out.meta.source is None:
                object.__setattr__(out, "meta", meta)  # a fresh payload from the mapper: nobody else holds it
            await self.ctx.emit(out)

    # -- approvals and other server requests -------------------------------------------------------------

    async def _server_request(self, req: ServerRequest) -> None:
        if is_approval(req.method, req.params):
            spec = approval_spec(req.method, req.id, req.params, self.mapper.tools)
            task = asyncio.get_running_loop().create_task(self._decide(req, spec))
            self._approvals[str(req.id)] = task
            task.add_done_callback(lambda t: self.rpc.inbound.put_nowait(Wakeup("approval", t)))
            return
        if req.method in (USER_INPUT_REQUEST, ELICITATION_REQUEST):
            with contextlib.suppress(ServerClosedError):
                await self.rpc.respond(req.id, declined_question(req.method, req.params))
            await self.ctx.emit(
                Notice(
                    kind=NoticeKind.LIFECYCLE.value,
                    text=f"declined a question from Codex ({req.method}); questions are auto-denied",
                    metadata={"code": "codex_question_declined"},
                    data={"params": req.params},
                )
            )
            return
        with contextlib.suppress(ServerClosedError):
            await self.rpc.respond_error(req.id, METHOD_NOT_FOUND, f"this client does not handle {req.method}")
        await self.ctx.emit(
            Notice(
                kind=NoticeKind.LIFECYCLE.value,
                text=f"refused unsupported request {req.method}",
                metadata={"code": "codex_request_refused"},
            )
        )

    async def _decide(self, req: ServerRequest, spec: ApprovalSpec) -> None:
        decision = await self.ctx.approvals.request(spec)
        if decision.by == "withdrawn":
            return
        answer = approval_answer(req.method, req.params, decision)
        if answer.get("decision") in ("cancel", "abort") or answer.get("action") == "cancel":
            self._cancelled_by_decision = True
        with contextlib.suppress(ServerClosedError):  # a closed process shows up as Closed next
            await self.rpc.respond(req.id, answer)

    def _withdraw(self, request_id: Any) -> None:
        key = str(request_id)
        if key in self._approvals:
            self.ctx.approvals.withdraw(key)

    # -- supplemental messages ---------------------------------------------------------------------------

    async def _watch_messages(self) -> None:
        port = self.ctx.messages
        assert port is not None
        while True:
            await self._rearm.wait()
            await port.wait(IN_TURN_BOUNDARIES)  # turn-end input waits for the turn to end
            self._rearm.clear()
            self.rpc.inbound.put_nowait(Wakeup("messages"))

    async def _wakeup(self, item: Wakeup) -> None:
        if item.kind == "approval":
            task: asyncio.Task[None] = item.payload
            for key, pending in list(self._approvals.items()):
                if pending is task:
                    del self._approvals[key]
            error = None if task.cancelled() else task.exception()
            if error is not None:
                raise error
            return
        if item.kind == "messages":
            await self._deliver_in_run()
        elif item.kind == "stderr":
            chunk: bytes = item.payload
            await self.ctx.emit(
                ProcessInfo(kind=ProcessKind.STDERR, text=chunk.decode("utf-8", "replace"), bytes=chunk)
            )

    async def _deliver_in_run(self) -> None:
        port = self.ctx.messages
        if port is None or self._interrupting:
            return
        thread_id = self.server.thread_id
        if port.pending(Boundary.INTERRUPT):
            self._interrupt_batch += port.claim(Boundary.INTERRUPT)
            self._interrupting = True
            with contextlib.suppress(RpcError, ServerClosedError):  # a closed process shows up as Closed next
                await self.rpc.request("turn/interrupt", {"threadId": thread_id, "turnId": self.turn_id})
            return
        if self._steering:
            for m in port.claim(Boundary.IN_RUN):
                if not self._steering:
                    port.requeue(m)
                    continue
                params = {"threadId": thread_id, "input": [text_input(m.text)], "expectedTurnId": self.turn_id}
                try:
                    await self.rpc.request("turn/steer", params)
                except (RpcError, ServerClosedError) as exc:
                    # The turn ended first (or the process is gone): the message waits for the next turn instead.
                    port.requeue(m, possible_duplicate=isinstance(exc, ServerClosedError))
                    self._steering = False
                    continue
                port.delivered(m, boundary=Boundary.IN_RUN, mechanism="turn/steer")
        if self._steering:
            self._rearm.set()

    # -- helpers -----------------------------------------------------------------------------------------

    def _tail(self) -> str:
        return self.server.proc.stderr_tail()[-STDERR_TAIL_CHARS:]

    def _failure(self, message: str, exc: BaseException) -> DriverFailure:
        details: dict[str, Any] = {"stderr_tail": self._tail()}
        if isinstance(exc, RpcError):
            details.update(code=exc.code, method=exc.method)
        if isinstance(exc, ServerClosedError):
            details.update(exit_code=exc.returncode)
        return DriverFailure(message, details=details, session_id=self.server.thread_id)

    async def _stop_helpers(self) -> None:
        tasks = [t for t in (self._watcher, *self._approvals.values()) if t is not None]
        self._watcher = None
        self._approvals.clear()
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(BaseException):
                await t


def _unreadable(method: str, exc: Exception) -> Notice:
    return Notice(
        kind=NoticeKind.LIFECYCLE.value,
        text=f"codex app-server sent a {method[:80]!r} notification this driver cannot read "
        f"({type(exc).__name__}: {str(exc)[:200]}); it was skipped",
        metadata={"code": "codex_unreadable_notification"},
    )
