"""The event-stream audit: invariants every observed run keeps, whatever the check."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from adaptor_nb import (
    ApprovalRequest,
    Done,
    Event,
    MessageFailure,
    MessageState,
    MessageUpdate,
    ProcessInfo,
    Result,
    RunError,
    RunFinished,
    RunStarted,
    Stream,
    TextDelta,
    Thinking,
    ToolCall,
    ToolResult,
    TurnEnd,
    Usage,
)

from ._verdicts import _expect


@dataclass
class _Outcome:
    stream: Stream
    events: list[Event]
    result: Result | None
    error: BaseException | None

    @property
    def final(self) -> Result | None:
        """The result, or the partial result a RunError carries."""
        if self.result is not None:
            return self.result
        if isinstance(self.error, RunError):
            return self.error.result
        return None

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def describe_error(self) -> str:
        return f"{type(self.error).__name__}: {self.error}" if self.error is not None else "no error"


def _name(ev: Event) -> str:
    return type(ev).__name__


def _audit(
    out: _Outcome,
    *,
    thread_key: str = "",
    launched: bool = True,
    texts: Mapping[str, str] | None = None,
) -> None:
    """Invariants every run must keep: event order and identity, Done, turns, usage, messages, approvals."""
    ev = out.events
    run_id = out.stream.run_id
    _expect(bool(ev), "the run produced no events (Done is always published)")
    _expect(isinstance(ev[-1], Done), f"the last event is {_name(ev[-1])}, not Done")
    _expect(len(out.of(Done)) == 1, f"{len(out.of(Done))} Done events; exactly one is allowed")
    done = ev[-1]
    assert isinstance(done, Done)
    _expect(done.result is out.result, "Done.result is not the object that result() returned")
    _expect(done.err is out.error, f"Done.err ({done.err!r}) is not the error result() raised ({out.error!r})")
    last = 0
    for e in ev:
        _expect(
            e.meta.sequence > last,
            f"sequence does not increase strictly: {_name(e)} has {e.meta.sequence} after {last}",
        )
        last = e.meta.sequence
        _expect(e.meta.run_id == run_id, f"{_name(e)} has meta.run_id {e.meta.run_id!r}, the stream is {run_id!r}")
        _expect(
            e.meta.thread_key == thread_key,
            f"{_name(e)} has meta.thread_key {e.meta.thread_key!r}, expected {thread_key!r}",
        )
    starts = [i for i, e in enumerate(ev) if isinstance(e, RunStarted)]
    if launched:
        _expect(starts == [0], f"RunStarted must be the first event, exactly once; events: {_names(ev)}")
    else:
        _expect(not starts, f"the run must be rejected before launch, but RunStarted was published: {_names(ev)}")
        driver_events = [e for e in ev if isinstance(e, ProcessInfo | TextDelta | Thinking | ToolCall | ToolResult)]
        _expect(not driver_events, f"a run rejected before launch produced driver events: {_names(driver_events)}")
    finished = out.of(RunFinished)
    _expect(len(finished) <= 1, f"{len(finished)} RunFinished events; at most one is allowed")
    if finished:
        _expect(finished[0].failed == (out.error is not None), "RunFinished.failed disagrees with the run's verdict")
    final = out.final
    turn_ends: list[TurnEnd] = out.of(TurnEnd)
    numbers = [t.turn for t in turn_ends]
    _expect(numbers == list(range(1, len(numbers) + 1)), f"TurnEnd turns must count 1, 2, ...; got {numbers}")
    if final is not None:
        _expect(
            final.turns == len(turn_ends),
            f"the result reports {final.turns} turn(s) but {len(turn_ends)} TurnEnd event(s) were published",
        )
        _expect(final.run_id == run_id, f"result.run_id {final.run_id!r} differs from stream.run_id {run_id!r}")
        _audit_usage(final.usage, turn_ends, finished)
        _audit_messages(final, ev, turn_ends, texts or {}, succeeded=out.error is None)
    requests: list[ApprovalRequest] = out.of(ApprovalRequest)
    ids = [r.id for r in requests]
    _expect(len(ids) == len(set(ids)), f"an approval request was published twice: {ids}")


def _names(events: Iterable[Event]) -> list[str]:
    return [_name(e) for e in events]


def _audit_usage(usage: Usage | None, turn_ends: list[TurnEnd], finished: list[RunFinished]) -> None:
    observed = [t.result.usage for t in turn_ends if t.result is not None and t.result.usage is not None]
    if observed:
        _expect(usage is not None, "turns reported usage but the result's usage is None (None means unobserved)")
    if usage is not None:
        for name in ("input_tokens", "output_tokens", "cached_input_tokens", "estimated_cost_milli"):
            value = getattr(usage, name)
            _expect(isinstance(value, int) and value >= 0, f"usage.{name} must be a non-negative int, got {value!r}")
    if finished:
        _expect(finished[0].usage == usage, f"RunFinished.usage {finished[0].usage} differs from the result's {usage}")


def _audit_messages(
    final: Result, ev: list[Event], turn_ends: list[TurnEnd], texts: Mapping[str, str], *, succeeded: bool
) -> None:
    outcomes = {m.id: m for m in final.messages()}
    _expect(len(outcomes) == len(final.messages()), "result.messages() lists a message id twice")
    latest: dict[str, MessageUpdate] = {}
    for e in ev:
        if isinstance(e, MessageUpdate):
            latest[e.id] = e
    _expect(
        set(latest) == set(outcomes),
        f"MessageUpdate ids {sorted(latest)} differ from result.messages() ids {sorted(outcomes)}",
    )
    for mid, text in texts.items():
        _expect(mid in outcomes, f"admitted message {mid!r} is missing from result.messages()")
        _expect(outcomes[mid].text == text, f"message {mid!r} lost its original text: {outcomes[mid].text!r}")
    for mid, m in outcomes.items():
        u = latest[mid]
        _expect(u.state == m.state, f"message {mid!r}: last MessageUpdate says {u.state.name}, outcome {m.state.name}")
        _expect(
            m.state in (MessageState.DELIVERED, MessageState.FAILED),
            f"message {mid!r} ended {m.state.name}: every admitted message ends delivered or failed",
        )
        if m.state is MessageState.FAILED:
            _expect(m.reason is not MessageFailure.NONE, f"failed message {mid!r} has no failure reason")
            _expect(u.text == m.text, f"the FAILED MessageUpdate of {mid!r} must carry the original text")
            _expect(m in final.undelivered(), f"failed message {mid!r} is missing from result.undelivered()")
        elif m.mechanism != "deduplicated":
            _expect(bool(m.boundary), f"delivered message {mid!r} names no boundary")
            _expect(m.turn >= 1, f"delivered message {mid!r} has turn {m.turn}; turns are one-based")
            _expect(
                not succeeded or m.turn <= len(turn_ends),
                f"delivered message {mid!r} names turn {m.turn}, but the successful run ended after "
                f"{len(turn_ends)} turn(s)",
            )
            if m.turn <= len(turn_ends):
                _expect(
                    mid in turn_ends[m.turn - 1].message_ids,
                    f"delivered message {mid!r} (turn {m.turn}) is missing from TurnEnd({m.turn}).message_ids "
                    f"{list(turn_ends[m.turn - 1].message_ids)}",
                )
    for t in turn_ends:
        for mid in t.message_ids:
            listed = outcomes.get(mid)
            _expect(
                listed is not None and listed.state is MessageState.DELIVERED and listed.turn == t.turn,
                f"TurnEnd({t.turn}) lists {mid!r}, which was not delivered in that turn",
            )
