"""RunContextImpl: the RunContext a driver sees for one execution (events, text, turns, raw streams)."""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Iterator
from typing import Any

from .._enums import NoticeKind, Phase, Role
from .._events import (
    CapabilityEnd,
    CapabilityStart,
    Done,
    Event,
    Notice,
    PlanUpdate,
    RunFinished,
    RunStarted,
    SubagentUpdate,
    TextDelta,
    TurnEnd,
)
from .._result import Result, SubagentResult, TerminalPayload, TranscriptItem, TranscriptMessage, Usage
from ..driver._emit import DONE, TextDeltas
from ..driver._spi import ClaimedMessage
from ._activity import ActivityLedger
from ._approvals import CoreApprovals
from ._broker import Broker
from ._messages import MessageQueue, limit_warning_turn, wrap_up_guidance
from ._redact import Redaction
from ._redact_frames import mask_split

_CORE_ONLY = (TurnEnd, Done, RunStarted, RunFinished)
_ACTIVITY = (PlanUpdate, CapabilityStart, CapabilityEnd)
_CONTENT = Phase.CONTENT
_TRANSCRIPT_ITEM = NoticeKind.TRANSCRIPT_ITEM
_ASSISTANT = Role.ASSISTANT


class RunContextImpl:
    """The RunContext a driver sees for one execution."""

    def __init__(
        self,
        *,
        run_id: str,
        thread_key: str,
        broker: Broker,
        queue: MessageQueue,
        approvals: CoreApprovals,
        max_turns: int,
    ) -> None:
        self._run_id = run_id
        self._thread_key = thread_key
        self._queue = queue
        self._approvals = approvals
        self._max_turns = max_turns
        self._messages = queue if queue.enabled else None
        self._broker = broker
        self._turns = 0
        self.usage: Usage | None = None
        self._turn_text: list[str] = []
        self.last_text = ""
        # Raw streams as the chunks they arrived in: joined only if somebody asks for them (Result.raw()).
        self.stdout: list[bytes] = []
        self.stderr: list[bytes] = []
        self.terminal_payload: TerminalPayload | None = None
        self.items: list[TranscriptItem] = []
        self.turn_open = False  # a provider turn started and has not reached turn_end yet
        self.subagents: dict[str, SubagentResult] = {}
        self.activity = ActivityLedger()
        self._warned = False
        self.redaction: Redaction | None = None  # set when the run has secrets: see redact_with

    @property
    def run_id(self) -> str:
        return self._run_id

    @property
    def thread_key(self) -> str:
        return self._thread_key

    @property
    def messages(self) -> MessageQueue | None:
        return self._messages

    @property
    def approvals(self) -> CoreApprovals:
        return self._approvals

    def redact_with(self, redaction: Redaction) -> None:
        """From here on, redact ``redaction``'s secrets from everything the driver reports."""
        self.redaction = redaction if redaction else None

    def emit(self, event: Event) -> Awaitable[None]:
        if self.redaction is not None:
            return self._emit_all(self.redaction.event(event))
        return self._emit(event)

    def _emit_all(self, events: list[Event]) -> Awaitable[None]:
        for i, event in enumerate(events):
            pending = self._emit(event)
            if pending is not DONE:
                return self._emit_rest(pending, iter(events[i + 1 :]), plain=True)
        return DONE

    def _emit(self, event: Event) -> Awaitable[None]:
        self.turn_open = True
        if isinstance(event, TextDelta):
            if type(event.text) is not str:  # the turn's text must stay joinable, or no partial result can be built
                raise TypeError(f"TextDelta.text must be a str, got {type(event.text).__name__}")
            if event.role is Role.ASSISTANT and event.phase is Phase.CONTENT:
                self._turn_text.append(event.text)
        elif isinstance(event, SubagentUpdate):
            self._subagent(event)
        elif isinstance(event, _ACTIVITY):
            event, item = self.activity.stamp(event)
            if item is not None:
                self.items.append(item)
        elif isinstance(event, _CORE_ONLY):
            raise ValueError(f"{type(event).__name__} is published by the core, not by drivers")
        if self._broker.publish_nowait(event):
            return DONE  # published within the call: no coroutine for the common case
        return self._publish(event)

    async def _publish(self, event: Event) -> None:
        await self._broker.publish(event)

    def emit_many(self, events: Iterable[Event]) -> Awaitable[None]:
        if type(events) is TextDeltas and self.redaction is None:
            return self._emit_texts(events, 0)
        it = iter(events)
        for event in it:
            pending = self.emit(event)
            if pending is not DONE:
                return self._emit_rest(pending, it)
        return DONE

    async def _emit_rest(self, pending: Awaitable[None], rest: Iterator[Event], *, plain: bool = False) -> None:
        await pending
        for event in rest:
            await (self._emit(event) if plain else self.emit(event))

    def _emit_texts(self, run: TextDeltas, start: int) -> Awaitable[None]:
        """Publish ``run``'s texts in one loop, as far as no hand-over to the consumer is due."""
        stop = self._push_texts(run, start)
        return DONE if stop == len(run.texts) else self._emit_texts_slowly(run, stop)

    async def _emit_texts_slowly(self, run: TextDeltas, stop: int) -> None:
        count = len(run.texts)
        while stop < count:  # the buffer asks for a hand-over: that one goes through the full path
            await self.emit(run[stop])
            stop = self._push_texts(run, stop + 1)

    def _push_texts(self, run: TextDeltas, start: int) -> int:
        self.turn_open = True
        texts = run.texts
        meta = run.meta
        stop = self._broker.push_texts(texts, start, run.message_id, None if meta is None else meta.source)
        if stop > start:
            self._turn_text.extend(texts if start == 0 and stop == len(texts) else texts[start:stop])
        return stop

    def _subagent(self, ev: SubagentUpdate) -> None:
        key = ev.task or ev.member
        cur = self.subagents.get(key) or SubagentResult(member=ev.member, task=ev.task)
        self.subagents[key] = SubagentResult(
            member=ev.member or cur.member,
            task=ev.task or cur.task,
            state=ev.state or cur.state,
            summary=ev.summary or cur.summary,
            usage=cur.usage,
            unread=cur.unread,
        )

    def raw_stdout(self, data: bytes) -> None:
        data = data if type(data) is bytes else bytes(data)
        if self.redaction is not None:
            data = self.redaction.stdout.feed(data)
        self.stdout.append(data)

    def raw_stderr(self, data: bytes) -> None:
        data = data if type(data) is bytes else bytes(data)
        if self.redaction is not None:
            data = self.redaction.stderr.feed(data)
        self.stderr.append(data)

    def terminal(self, event: str, payload: Any) -> None:
        if self.redaction is not None:
            payload = self.redaction.value(payload)
        self.terminal_payload = TerminalPayload(event=event, json=payload)

    def transcript(self, item: TranscriptItem) -> None:
        if self.redaction is not None:
            self._publish_now(self.redaction.flush())
            item = self.redaction.value(item)
        self.items.append(item)
        if not self._broker.closed:
            self._broker.publish_critical(Notice(kind=_TRANSCRIPT_ITEM, item=item))

    def set_turn_id(self, turn_id: str) -> None:
        self.turn_open = True
        self._broker.turn_id = turn_id

    @property
    def turns(self) -> int:
        return self._turns

    def current_text(self) -> str:
        return "".join(self._turn_text)

    def _publish_now(self, events: list[Event]) -> None:
        """Publish held-back stream ends at once (never dropped): the stream they belong to has ended."""
        for event in events:
            if isinstance(event, TextDelta) and event.role is _ASSISTANT and event.phase is _CONTENT:
                self._turn_text.append(event.text)
            if not self._broker.closed:
                self._broker.publish_critical(event)

    def end_streams(self) -> None:
        """The driver is done: flush what redaction held back of every stream."""
        r = self.redaction
        if r is None:
            return
        self._publish_now(r.flush())
        for stream, out in ((r.stdout, self.stdout), (r.stderr, self.stderr)):
            held = stream.flush()
            if held:
                out.append(held)
        if r.spanned or r.stdout.spanned:  # the frames may hold a secret's pieces in one field's values
            self.stdout[:] = mask_split(b"".join(self.stdout).splitlines(keepends=True), r.secrets)

    async def turn_end(self, *, usage: Usage | None = None, text: str | None = None) -> bool:
        if self.redaction is not None:
            self._publish_now(self.redaction.flush())
            if text is not None:
                text = self.redaction.text(text)
        self._turns += 1
        self.turn_open = False
        self.usage = Usage.add(self.usage, usage)
        turn_text = text if text is not None else "".join(self._turn_text)
        self._turn_text.clear()
        self.last_text = turn_text
        queue, max_turns = self._queue, self._max_turns
        ids = queue.delivered_in_turn(self._turns)
        snapshot = Result(turns=1, run_id=self._run_id, text=turn_text, usage=usage, thread_key=self._thread_key)
        self._broker.publish_critical(TurnEnd(turn=self._turns, result=snapshot, message_ids=ids))
        warn_at = limit_warning_turn(max_turns)
        if (
            not self._warned
            and warn_at is not None
            and self._turns >= warn_at
            and queue.enabled
            and queue.can_continue()
        ):
            self._warned = True
            queue.wrap_up = wrap_up_guidance(self._turns, max_turns)
            self._broker.publish_critical(
                Notice(
                    kind="limit.approaching",
                    text=f"{self._turns} of {max_turns} turns used; wrap up soon",
                    data={"turns": self._turns, "max_turns": max_turns},
                )
            )
        if self._turns >= max_turns:
            queue.limit_reached = True
            return False
        return True

    def message_delivered(self, m: ClaimedMessage, boundary: str, mechanism: str) -> None:
        self.transcript(
            TranscriptItem(
                kind="message",
                text=m.original,
                message=TranscriptMessage(
                    id=m.id, author=m.author, mechanism=mechanism, boundary=boundary, text=m.original
                ),
            )
        )
