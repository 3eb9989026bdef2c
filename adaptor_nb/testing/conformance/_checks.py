"""The public driver conformance suite: checks through Agent, Thread and Stream that a driver does what it declares.

Usage with the offline reference driver (no hooks needed; the suite scripts it for every check)::

    from adaptor_nb.drivers import reference
    from adaptor_nb.testing import run_driver_conformance

    async def test_reference_conforms():
        await run_driver_conformance(reference.Driver)

A driver that talks to a real CLI needs a model that behaves as each check asks. A factory with a required positional
parameter receives the check's :class:`ConformanceCase`; it returns a Driver, an awaitable of one, or an (async)
context manager that yields one and cleans up afterwards, typically a fake model server scripted from ``case.runs``::

    @contextlib.asynccontextmanager
    async def claude_for(case: ConformanceCase):
        async with FakeAnthropicServer() as server:
            for run in case.runs:
                server.enqueue(*replies_for(run, case.hold))   # translate the neutral script to server replies
            yield claude.Driver(claude.Config(env={"ANTHROPIC_BASE_URL": server.url, ...}))

    report = await run_driver_conformance(claude_for, agent_options={"model": "claude-fake-1"})

Each :class:`ModelRun` says, in provider-neutral terms, what the model does in one run (one ``send``) of the check:
optionally first raise a decision of kind ``approval`` (a tool that needs permission, a plan to review, or a question
with ``choices``), then answer ``reply`` (or the JSON value ``structured``), and answer ``follow_up`` on every later
turn of the same run (continuations with supplemental input). ``fail`` makes the model request fail (an HTTP 500) so
the run must end in a RunError. ``hold`` pauses the first turn mid-stream until the suite calls
``case.hold.release()``; the server may wait on ``case.hold`` like a ``threading.Event`` (its ``wait()`` reports the
arrival) or call ``case.hold.arrived()`` itself. The suite releases the hold right after admitting a message, except
for ``Timing.INTERRUPT``: then it keeps the turn held until the message is delivered or failed (at most half the
timeout), so the driver has to interrupt the held turn. ``prompt_for(case, index)`` makes the prompt of run
``index`` (the default asks for the reply in plain words; a hook may add directives its fake server understands).

The factory is also called once for the case named ``"descriptor"`` (no runs) to read the declared capabilities.
Every check gets a fresh driver, Agent and workspace directory, is bounded by ``timeout`` seconds, and never sleeps
to synchronise. The suite returns a :class:`ConformanceReport` and raises AssertionError listing the failures unless
``raise_on_failure=False``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import shutil
import tempfile
import threading
import time
import traceback
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, NoReturn

from ..._agent import Agent
from ..._approvals import ApprovalRequest
from ..._enums import (
    ApprovalKind,
    ApprovalMode,
    AuthorKind,
    Boundary,
    FailureReason,
    FallbackAction,
    FeatureLevel,
    MessageFailure,
    MessageState,
    NoticeKind,
    QuestionMode,
    SandboxLevel,
    Timing,
)
from ..._errors import (
    ApprovalDenied,
    ApprovalResolvedError,
    HumanDecisionModeUnsupportedError,
    MessageError,
    MessageUnsupportedError,
    PolicyCapabilityUnsupportedError,
    RunCancelled,
    RunError,
    RunFinishedError,
    StructuredOutputUnsupportedError,
)
from ..._events import (
    Done,
    Event,
    MessageUpdate,
    Notice,
    ProcessInfo,
    RunFinished,
    RunStarted,
    TextDelta,
    Thinking,
    ToolCall,
    ToolResult,
    TurnEnd,
)
from ..._policy import ApprovalPolicy, Author, Policy
from ..._result import Result, Usage
from ..._stream import Stream
from ...driver._spi import Descriptor, Driver, DriverOutcome, Invocation, MessageCapabilities, RunContext
from ...drivers import reference

__all__ = [
    "CHECKS",
    "CheckResult",
    "ConformanceCase",
    "ConformanceReport",
    "Hold",
    "ModelRun",
    "default_prompt",
    "run_driver_conformance",
]

Status = Literal["pass", "fail", "skip"]
FOLLOW_UP = "Conformance follow-up answer."
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["title", "count"],
    "additionalProperties": False,
}
STRUCTURED_VALUE: dict[str, Any] = {"title": "conformance", "count": 3}
QUESTION_CHOICES = ("red", "blue")
_REFERENCE_FOLLOW_UPS = 8


# --- the public vocabulary ----------------------------------------------------------------------------------


class Hold(threading.Event):
    """A pause inside a scripted model turn: the model waits here until the suite calls ``release()``.

    It is a ``threading.Event``, so a fake model server thread can wait on it directly; ``wait()`` (or an explicit
    ``arrived()``) tells the suite the turn has reached the pause.
    """

    def __init__(self) -> None:
        super().__init__()
        self._arrival = threading.Event()
        self._callbacks: list[Callable[[], None]] = []
        self._interrupt_callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._notify: Callable[[], None] | None = None

    def arrived(self) -> None:
        """Report that the model reached the pause (thread-safe)."""
        with self._lock:
            self._arrival.set()
            notify = self._notify
        if notify is not None:
            notify()

    @property
    def has_arrived(self) -> bool:
        return self._arrival.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Report the arrival, then block until released (or ``timeout``)."""
        self.arrived()
        return super().wait(timeout)

    def on_interrupt(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the suite has asked the provider to interrupt the held turn.

        The hold itself stays closed until the interrupting message settles, so a real provider must abort the held
        request on its own; a scripted model that only notices interrupts between its steps (like the reference
        driver's) can use this to move on to its next step.
        """
        with self._lock:
            self._interrupt_callbacks.append(callback)

    def _interrupted(self) -> None:
        with self._lock:
            callbacks, self._interrupt_callbacks = self._interrupt_callbacks, []
        for cb in callbacks:
            cb()

    def on_release(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the hold is released (at once if it already is)."""
        with self._lock:
            if not self.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def release(self) -> None:
        """Let the model go on (idempotent)."""
        with self._lock:
            if self.is_set():
                return
            self.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb()

    def _bind(self, loop: asyncio.AbstractEventLoop, event: asyncio.Event) -> None:
        def notify() -> None:
            if not loop.is_closed():
                loop.call_soon_threadsafe(event.set)

        with self._lock:
            self._notify = notify
            arrived = self._arrival.is_set()
        if arrived:
            notify()


@dataclass(frozen=True)
class ModelRun:
    """What the model does during one run of a check, in provider-neutral terms."""

    reply: str
    approval: ApprovalKind | None = None
    choices: tuple[str, ...] = ()
    structured: Any = None
    hold: bool = False
    fail: bool = False
    follow_up: str = FOLLOW_UP


@dataclass
class ConformanceCase:
    """One check's script: the runs the model must play, a fresh workspace, and the hold the suite releases."""

    check: str
    runs: tuple[ModelRun, ...] = ()
    workspace: str = ""
    hold: Hold = field(default_factory=Hold)
    schema: dict[str, Any] | None = None


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one check."""

    name: str
    status: Status
    reason: str = ""
    duration: float = 0.0


@dataclass(frozen=True)
class ConformanceReport:
    """Per-check verdicts for one driver."""

    driver: str
    descriptor: Descriptor | None
    results: tuple[CheckResult, ...]

    @property
    def passed(self) -> list[str]:
        return [r.name for r in self.results if r.status == "pass"]

    @property
    def failed(self) -> list[CheckResult]:
        return [r for r in self.results if r.status == "fail"]

    @property
    def skipped(self) -> list[CheckResult]:
        return [r for r in self.results if r.status == "skip"]

    @property
    def ok(self) -> bool:
        return not self.failed

    def status(self, name: str) -> Status:
        """The status of check ``name``."""
        for r in self.results:
            if r.name == name:
                return r.status
        raise KeyError(f"no check named {name!r} in this report")

    def __str__(self) -> str:
        lines = [
            f"driver conformance for {self.driver!r}: {len(self.passed)} passed, {len(self.failed)} failed, "
            f"{len(self.skipped)} skipped"
        ]
        for r in self.results:
            tail = f": {r.reason}" if r.reason else ""
            lines.append(f"  {r.status.upper():4} {r.name} ({r.duration:.2f} s){tail}")
        return "\n".join(lines)

    def raise_for_failures(self) -> None:
        """Raise AssertionError listing every failed check."""
        if self.failed:
            listing = "\n".join(f"- {r.name}: {r.reason}" for r in self.failed)
            raise AssertionError(f"driver {self.driver!r} failed {len(self.failed)} conformance check(s):\n{listing}")


def default_prompt(case: ConformanceCase, index: int) -> str:
    """The prompt of run ``index``: plain words asking for the scripted reply."""
    run = case.runs[index]
    return f"adaptor_nb conformance check {case.check!r}, run {index + 1}. Reply with exactly: {run.reply}"


# --- failures and skips -------------------------------------------------------------------------------------


class _Breach(AssertionError):
    """The driver broke the contract."""


class _Skip(Exception):
    """The check does not apply to what the driver declares."""


def _fail(message: str) -> NoReturn:
    raise _Breach(message)


def _expect(condition: bool, message: str) -> None:
    if not condition:
        _fail(message)


def _skip(reason: str) -> NoReturn:
    raise _Skip(reason)


# --- the reference driver, scripted per case ----------------------------------------------------------------


class _HoldGate(reference.Gate):
    """A reference-driver gate tied to a case's Hold."""

    def __init__(self, hold: Hold) -> None:
        super().__init__()
        self._hold = hold
        hold.on_release(self.open)
        hold.on_interrupt(self.open)

    async def pass_through(self) -> None:
        self._hold.arrived()
        await super().pass_through()


def _reference_scenario(case: ConformanceCase, run: ModelRun) -> reference.Scenario:
    ref = reference
    if run.fail:
        return ref.Scenario(
            ref.Turn(ref.Fail("conformance: the scripted model request failed", stderr="scripted failure\n"))
        )
    steps: list[Any] = []
    if run.hold:
        steps.append(_HoldGate(case.hold))
    if run.approval is ApprovalKind.PERMISSION:
        steps.append(
            ref.ToolUse(
                "conformance_tool",
                {"command": "echo conformance"},
                {"output": "conformance"},
                approval=ApprovalKind.PERMISSION,
            )
        )
    elif run.approval is ApprovalKind.PLAN_REVIEW:
        steps.append(ref.PlanReview("1. Read the request.\n2. Answer it."))
    elif run.approval is ApprovalKind.QUESTION:
        steps.append(ref.Ask("Which option should the answer use?", run.choices))
    if run.structured is not None:
        steps += [ref.Text(json.dumps(run.structured)), ref.Structured(run.structured)]
    else:
        steps.append(ref.Text(run.reply))
    follow = tuple(ref.Turn(ref.Text(run.follow_up)) for _ in range(_REFERENCE_FOLLOW_UPS))
    return ref.Scenario(ref.Turn(*steps), *follow)


class _ScriptedReference:
    """Wraps a reference driver (or a subclass) so that its n-th run plays the case's n-th ModelRun.

    Everything else, the descriptor above all, comes from the wrapped driver unchanged.
    """

    def __init__(self, inner: reference.Driver, case: ConformanceCase) -> None:
        self._inner = inner
        self._case = case
        self._count = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __repr__(self) -> str:
        return f"scripted {self._inner!r}"

    @property
    def name(self) -> str:
        return self._inner.name

    def descriptor(self) -> Descriptor:
        return self._inner.descriptor()

    def validate_config(self) -> None:
        self._inner.validate_config()

    def config_fingerprint(self) -> str:
        return self._inner.config_fingerprint()

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        runs = self._case.runs
        if runs:
            run = runs[min(self._count, len(runs) - 1)]
            self._inner.config = replace(self._inner.config, scenario=_reference_scenario(self._case, run))
        self._count += 1
        return await self._inner.run(invocation, ctx)


# --- observing runs -----------------------------------------------------------------------------------------


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


EventHook = Callable[[Event], "Awaitable[None] | None"]


class _Watch:
    """Consumes one stream's events in a task (the single consumer) and then reads its result."""

    def __init__(self, stream: Stream, on_event: EventHook | None) -> None:
        self.stream = stream
        self.events: list[Event] = []
        self.content = asyncio.Event()
        self.settled: dict[str, asyncio.Event] = {}
        self.problems: list[str] = []
        self._on_event = on_event
        self.task = asyncio.get_running_loop().create_task(self._consume())

    async def _consume(self) -> None:
        async for ev in self.stream.events():
            self.events.append(ev)
            if isinstance(ev, TextDelta | Thinking | ToolCall):
                self.content.set()
            elif isinstance(ev, MessageUpdate) and ev.state is not MessageState.ACCEPTED:
                self.settled.setdefault(ev.id, asyncio.Event()).set()
            if self._on_event is not None:
                try:
                    out = self._on_event(ev)
                    if inspect.isawaitable(out):
                        await out
                except AssertionError as exc:
                    self.problems.append(str(exc))

    async def finish(self) -> _Outcome:
        try:
            await self.task
        finally:
            if not self.task.done():
                self.task.cancel()
        result: Result | None = None
        error: BaseException | None = None
        try:
            result = await self.stream.result()
        except Exception as exc:
            error = exc
        if self.problems:
            _fail("; ".join(self.problems))
        return _Outcome(self.stream, list(self.events), result, error)


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


# --- the harness --------------------------------------------------------------------------------------------


DriverSource = Callable[..., Any]


@dataclass
class _Settings:
    factory: DriverSource
    prompt_for: Callable[[ConformanceCase, int], str]
    agent_options: Mapping[str, Any] | Callable[[ConformanceCase], Mapping[str, Any]] | None
    timeout: float


def _takes_case(factory: DriverSource) -> bool:
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return False
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL,):
            return True
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty:
            return True
    return False


async def _make_driver(settings: _Settings, case: ConformanceCase, stack: contextlib.AsyncExitStack) -> Driver:
    factory = settings.factory
    made: Any = factory(case) if _takes_case(factory) else factory()
    if inspect.isawaitable(made):
        made = await made
    if hasattr(made, "__aenter__") and hasattr(made, "__aexit__"):
        made = await stack.enter_async_context(made)
    elif hasattr(made, "__enter__") and hasattr(made, "__exit__") and not hasattr(made, "descriptor"):
        made = stack.enter_context(made)
    if isinstance(made, reference.Driver):
        return _ScriptedReference(made, case)
    return made  # type: ignore[no-any-return]


class _Harness:
    """Per-check state: the case, the driver and Agent, and helpers to observe runs."""

    def __init__(self, name: str, desc: Descriptor, settings: _Settings, stack: contextlib.AsyncExitStack) -> None:
        self.name = name
        self.desc = desc
        self.settings = settings
        self.stack = stack
        self.case: ConformanceCase | None = None
        self.agent: Agent | None = None
        self.workspace = tempfile.mkdtemp(prefix=f"adaptor-conformance-{name}-")
        self.hold_arrived = asyncio.Event()
        self.driver_name = ""

    async def start(self, *runs: ModelRun, schema: dict[str, Any] | None = None, **options: Any) -> Agent:
        """Build the case, make the driver and an Agent for it."""
        case = ConformanceCase(check=self.name, runs=tuple(runs), workspace=self.workspace, schema=schema)
        case.hold._bind(asyncio.get_running_loop(), self.hold_arrived)
        self.case = case
        driver = await _make_driver(self.settings, case, self.stack)
        extra = self.settings.agent_options
        hook_options = dict(extra(case) if callable(extra) else (extra or {}))
        merged = {"workspace": self.workspace, **hook_options, **options}
        self.agent = Agent(driver, **merged)
        self.driver_name = driver.name
        _expect(
            self.agent.descriptor == self.desc,
            "descriptor() differs between two driver instances from the same factory",
        )
        return self.agent

    def prompt(self, index: int) -> str:
        assert self.case is not None
        return self.settings.prompt_for(self.case, index)

    def watch(self, stream: Stream, on_event: EventHook | None = None) -> _Watch:
        return _Watch(stream, on_event)

    async def run(
        self,
        stream: Stream,
        on_event: EventHook | None = None,
        *,
        thread_key: str = "",
        launched: bool = True,
    ) -> _Outcome:
        out = await self.watch(stream, on_event).finish()
        _audit(out, thread_key=thread_key, launched=launched)
        return out

    async def reach_hold(self, watch: _Watch) -> None:
        """Wait until the model is paused at the hold (or its turn visibly streams), or the run ended."""
        waiters = {
            asyncio.ensure_future(self.hold_arrived.wait()),
            asyncio.ensure_future(watch.content.wait()),
        }
        try:
            await asyncio.wait({*waiters, watch.task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waiters:
                w.cancel()
        if watch.task.done() or watch.stream.done:
            _fail(
                "the run ended before the scripted hold was reached: the model must pause at case.hold "
                "until the suite releases it"
            )

    async def settled(self, watch: _Watch, message_id: str, limit: float) -> bool:
        """Wait until the message is delivered or failed, or the run ends; False if ``limit`` seconds pass first."""
        flag = watch.settled.setdefault(message_id, asyncio.Event())
        waiter = asyncio.ensure_future(flag.wait())
        try:
            done, _ = await asyncio.wait({waiter, watch.task}, timeout=limit, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        return bool(done)

    def release(self) -> None:
        if self.case is not None:
            self.case.hold.release()

    async def close(self) -> None:
        self.release()
        try:
            if self.agent is not None:
                await self.agent.close(timeout=self.settings.timeout)
        finally:
            shutil.rmtree(self.workspace, ignore_errors=True)


def _success(out: _Outcome, what: str) -> Result:
    _expect(out.error is None and out.result is not None, f"{what} failed: {out.describe_error()}")
    assert out.result is not None
    return out.result


def _same_text(got: str, want: str, what: str) -> None:
    _expect(got.strip() == want.strip(), f"{what}: result.text is {got!r}, the model answered {want!r}")


# --- checks: events and results -----------------------------------------------------------------------------


async def check_event_ordering(h: _Harness) -> str | None:
    """RunStarted first, strictly increasing sequences, one run id, TurnEnd per turn, Done last with the result."""
    reply = "Conformance answer about event ordering."
    agent = await h.start(ModelRun(reply=reply))
    out = await h.run(agent.send(h.prompt(0)))
    result = _success(out, "a plain run")
    _expect(result.turns >= 1, f"a successful run reports {result.turns} turns; at least one is expected")
    _expect(bool(out.of(TurnEnd)), "no TurnEnd event was published")
    _same_text(result.text, reply, "a plain run")
    again = await out.stream.result()
    _expect(again is result, "result() is not repeatable: a second call returned another object")
    return f"{len(out.events)} events, {result.turns} turn(s)"


async def check_results(h: _Harness) -> str | None:
    """The Result carries text, turns, model, provider and usage (None only when unobserved)."""
    reply = "Conformance answer about results."
    agent = await h.start(ModelRun(reply=reply))
    out = await h.run(agent.send(h.prompt(0)))
    result = _success(out, "a plain run")
    _same_text(result.text, reply, "a plain run")
    _expect(result.turns >= 1, f"turns is {result.turns}; a successful run has at least one")
    _expect(isinstance(result.model, str), "result.model must be a str")
    _expect(bool(result.provider), "result.provider is empty")
    _expect(not result.undelivered(), "a run without supplemental messages reports undelivered messages")
    raw = result.raw()
    _expect(isinstance(raw.stdout, bytes) and isinstance(raw.stderr, bytes), "raw() streams must be bytes")
    _expect(isinstance(result.transcript(), list), "transcript() must be a list")
    return f"usage {'unobserved' if result.usage is None else 'observed'}"


# --- checks: policy -----------------------------------------------------------------------------------------


def _unsupported_policies(desc: Descriptor) -> list[tuple[str, Policy, type[Exception]]]:
    out: list[tuple[str, Policy, type[Exception]]] = []
    caps = desc.policy
    for level in SandboxLevel:
        if level.value and level not in caps.sandbox:
            out.append((f"sandbox={level.name}", Policy(sandbox=level), PolicyCapabilityUnsupportedError))
    for feature in FeatureLevel:
        if feature.value and feature not in caps.web_search:
            out.append((f"web_search={feature.name}", Policy(web_search=feature), PolicyCapabilityUnsupportedError))
        if feature.value and feature not in caps.browser:
            out.append((f"browser={feature.name}", Policy(browser=feature), PolicyCapabilityUnsupportedError))
    ac = desc.approvals
    for mode in ApprovalMode:
        if mode.value and mode not in ac.permission_modes:
            out.append(
                (
                    f"approvals.permission={mode.name}",
                    Policy(approvals=ApprovalPolicy(permission=mode)),
                    HumanDecisionModeUnsupportedError,
                )
            )
        if mode.value and mode not in ac.plan_review_modes:
            out.append(
                (
                    f"approvals.plan_review={mode.name}",
                    Policy(approvals=ApprovalPolicy(plan_review=mode)),
                    HumanDecisionModeUnsupportedError,
                )
            )
    for qmode in QuestionMode:
        if qmode.value and qmode not in ac.question_modes:
            out.append(
                (
                    f"approvals.question={qmode.name}",
                    Policy(approvals=ApprovalPolicy(question=qmode)),
                    HumanDecisionModeUnsupportedError,
                )
            )
    return out


async def check_policy_rejected(h: _Harness) -> str | None:
    """Explicit policy values the driver does not declare fail before launch with the matching error."""
    cases = _unsupported_policies(h.desc)
    if not cases:
        _skip("the driver declares every explicit policy value")
    agent = await h.start()
    for label, policy, error in cases:
        out = await h.run(agent.send(f"conformance: {label} must be rejected", policy=policy), launched=False)
        _expect(
            isinstance(out.error, error),
            f"policy {label} is not declared, so the run must fail with {error.__name__}; got {out.describe_error()}",
        )
        option = str(getattr(out.error, "option", ""))
        dimension = label.split("=")[0]
        _expect(dimension in option, f"the {error.__name__} for {label} names option {option!r}")
    return f"{len(cases)} undeclared value(s) rejected before launch"


def _policy_labels(policy: Policy) -> list[str]:
    a = policy.approvals
    pairs: list[tuple[str, SandboxLevel | FeatureLevel | ApprovalMode | QuestionMode]] = [
        ("sandbox", policy.sandbox),
        ("web_search", policy.web_search),
        ("browser", policy.browser),
        ("approvals.permission", a.permission),
        ("approvals.plan_review", a.plan_review),
        ("approvals.question", a.question),
    ]
    return [f"{k}={v.name}" for k, v in pairs if v.value]


def _pick(supported: frozenset[Any], order: Iterable[Any], default: Any) -> Any:
    for value in order:
        if value in supported:
            return value
    return default


async def check_policy_accepted(h: _Harness) -> str | None:
    """A run with declared explicit policy values starts and succeeds."""
    caps, ac = h.desc.policy, h.desc.approvals
    policy = Policy(
        sandbox=_pick(
            caps.sandbox,
            (SandboxLevel.READ_ONLY, SandboxLevel.WORKSPACE_WRITE, SandboxLevel.UNRESTRICTED),
            SandboxLevel.INHERIT,
        ),
        web_search=_pick(caps.web_search, (FeatureLevel.DENY, FeatureLevel.ALLOW), FeatureLevel.INHERIT),
        browser=_pick(caps.browser, (FeatureLevel.DENY, FeatureLevel.ALLOW), FeatureLevel.INHERIT),
        approvals=ApprovalPolicy(
            permission=_pick(ac.permission_modes, tuple(ApprovalMode)[1:], ApprovalMode.INHERIT),
            plan_review=_pick(ac.plan_review_modes, tuple(ApprovalMode)[1:], ApprovalMode.INHERIT),
            question=_pick(ac.question_modes, tuple(QuestionMode)[1:], QuestionMode.INHERIT),
        ),
    )
    if policy == Policy():
        _skip("the driver declares no explicit policy value")
    reply = "Conformance answer under a declared policy."
    agent = await h.start(ModelRun(reply=reply))
    out = await h.run(agent.send(h.prompt(0), policy=policy))
    result = _success(out, f"a run with declared policy {policy}")
    _same_text(result.text, reply, "a run with a declared policy")
    return "accepted " + ", ".join(_policy_labels(policy))


# --- checks: structured output ------------------------------------------------------------------------------


async def check_structured_output(h: _Harness) -> str | None:
    """Declared structured output (native or prompted) yields the validated value; none declared fails before launch."""
    so = h.desc.structured_output
    value = dict(STRUCTURED_VALUE)
    agent = await h.start(ModelRun(reply=json.dumps(value), structured=value), schema=SCHEMA)
    if not so.native and not so.prompted:
        out = await h.run(agent.send("conformance: structured output is not declared", schema=SCHEMA), launched=False)
        _expect(
            isinstance(out.error, StructuredOutputUnsupportedError),
            f"no structured output is declared, so a schema must fail with StructuredOutputUnsupportedError; "
            f"got {out.describe_error()}",
        )
        return "not declared: rejected before launch"
    out = await h.run(agent.send(h.prompt(0), schema=SCHEMA))
    mode = "native" if so.native else "prompted"
    result = _success(out, f"a {mode} structured run")
    _expect(result.structured == value, f"{mode} structured output is {result.structured!r}, expected {value!r}")
    decoded: dict[str, Any] = result.decode(dict)
    _expect(decoded == value, f"result.decode(dict) returned {decoded!r}, expected {value!r}")
    _expect(result.metadata.get("structured_output.valid") != "false", "the structured answer was marked invalid")
    return f"{mode} value validated"


# --- checks: supplemental messages --------------------------------------------------------------------------


def _timing_declared(caps: MessageCapabilities, timing: Timing) -> bool:
    if timing is Timing.SOON:
        return bool(caps.boundaries)
    if timing is Timing.AFTER_TURN:
        return Boundary.TURN_END in caps.boundaries
    return caps.interrupt


_SOON_BOUNDARIES = {Boundary.IN_RUN.value, Boundary.TURN_END.value}


def _expected_boundaries(caps: MessageCapabilities, timing: Timing) -> set[str]:
    if timing is Timing.SOON:
        return {b.value for b in caps.boundaries if b.value in _SOON_BOUNDARIES} | {Boundary.TURN_END.value}
    if timing is Timing.AFTER_TURN:
        return {Boundary.TURN_END.value}
    return {Boundary.INTERRUPT.value}


async def _check_timing(h: _Harness, timing: Timing) -> str | None:
    caps = h.desc.messages
    declared = _timing_declared(caps, timing)
    reply = f"Conformance answer while a {timing.name} message arrives."
    agent = await h.start(ModelRun(reply=reply, hold=True))
    stream = agent.send(h.prompt(0))
    watch = h.watch(stream)
    text = f"Conformance supplemental message sent with {timing.name}."
    mid = f"conformance-{timing.name.lower()}"
    admitted = False
    unsettled = ""
    try:
        await h.reach_hold(watch)
        try:
            got = await stream.send(text, id=mid, when=timing)
            admitted = True
            _expect(got == mid, f"send() returned id {got!r} for message {mid!r}")
            if timing is Timing.INTERRUPT:
                # The turn stays held: only an interrupt can end it before the model goes on.
                assert h.case is not None
                h.case.hold._interrupted()
                if not await h.settled(watch, mid, h.settings.timeout / 2):
                    unsettled = f" (it was still unsettled {h.settings.timeout / 2:g} s into the held turn)"
        except MessageUnsupportedError as exc:
            _expect(
                not declared, f"Timing.{timing.name} is declared but the message was rejected as unsupported: {exc}"
            )
            _expect(exc.text == text, f"MessageUnsupportedError must carry the original text, got {exc.text!r}")
        except MessageError as exc:
            _fail(f"the {timing.name} message was refused during a live run: {type(exc).__name__}: {exc}")
    finally:
        h.release()
    out = await watch.finish()
    _audit(out, texts={mid: text} if admitted else {})
    if not declared:
        _expect(not admitted, f"Timing.{timing.name} is not declared, yet the message was admitted instead of rejected")
        return "not declared: rejected with MessageUnsupportedError"
    _success(out, f"a run with a {timing.name} message")
    final = out.final
    assert final is not None
    (m,) = [o for o in final.messages() if o.id == mid]
    _expect(
        m.state is MessageState.DELIVERED,
        f"a {timing.name} message admitted during a held turn ended {m.state.name} ({m.reason.value}); "
        "a declared timing must be delivered",
    )
    allowed = _expected_boundaries(caps, timing)
    _expect(
        m.boundary in allowed,
        f"{timing.name} message delivered at {m.boundary!r}; expected one of {sorted(allowed)}{unsettled}",
    )
    if m.boundary == Boundary.IN_RUN.value:
        _expect(Boundary.IN_RUN in caps.boundaries, "a message was delivered in-run, which the driver does not declare")
    return f"delivered at {m.boundary} by {m.mechanism or 'an unnamed mechanism'} in turn {m.turn}"


async def check_messages_soon(h: _Harness) -> str | None:
    """Timing.SOON is admitted and delivered when a boundary is declared, else rejected as unsupported."""
    return await _check_timing(h, Timing.SOON)


async def check_messages_after_turn(h: _Harness) -> str | None:
    """Timing.AFTER_TURN is delivered at turn end when TURN_END is declared, else rejected as unsupported."""
    return await _check_timing(h, Timing.AFTER_TURN)


async def check_messages_interrupt(h: _Harness) -> str | None:
    """Timing.INTERRUPT is delivered by interrupting when declared, else rejected as unsupported."""
    return await _check_timing(h, Timing.INTERRUPT)


async def check_message_lifecycle(h: _Harness) -> str | None:
    """Several admitted messages all end delivered or failed, in admission order, agreeing with MessageUpdate."""
    caps = h.desc.messages
    if not caps.supported:
        _skip("the driver declares no message boundary")
    reply = "Conformance answer while several messages arrive."
    agent = await h.start(ModelRun(reply=reply, hold=True))
    stream = agent.send(h.prompt(0))
    watch = h.watch(stream)
    sent: dict[str, str] = {}
    plan: list[tuple[str, str, Timing, Author]] = []
    if caps.boundaries:
        plan.append(("conformance-life-1", "First conformance note.", Timing.SOON, Author()))
        plan.append(
            (
                "conformance-life-2",
                "Second conformance note, from a peer.",
                Timing.SOON,
                Author(kind=AuthorKind.AGENT, id="peer", name="Peer"),
            )
        )
    if Boundary.TURN_END in caps.boundaries:
        plan.append(("conformance-life-3", "Third conformance note, after the turn.", Timing.AFTER_TURN, Author()))
    if not plan:
        h.release()
        await watch.finish()
        _skip("the driver declares only interrupt delivery")
    try:
        await h.reach_hold(watch)
        for mid, text, timing, author in plan:
            got = await stream.send(text, id=mid, when=timing, author=author)
            _expect(got == mid, f"send() returned {got!r} for {mid!r}")
            sent[mid] = text
        first_id, first_text = plan[0][0], plan[0][1]
        again = await stream.send(first_text, id=first_id)
        _expect(again == first_id, "re-sending an admitted id must return the same id")
    finally:
        h.release()
    out = await watch.finish()
    _audit(out, texts=sent)
    result = _success(out, "a run with supplemental messages")
    ids = [m.id for m in result.messages()]
    _expect(ids == list(sent), f"result.messages() must list admitted messages in order: {ids} vs {list(sent)}")
    for m in result.messages():
        _expect(m.state is MessageState.DELIVERED, f"message {m.id!r} ended {m.state.name} in a healthy run")
    try:
        await stream.send("A message after the end.", id="conformance-late")
    except RunFinishedError as exc:
        _expect(exc.text == "A message after the end.", "RunFinishedError must carry the original text")
    except MessageError as exc:
        _fail(f"a message after the end must raise RunFinishedError, got {type(exc).__name__}: {exc}")
    else:
        _fail("a message sent after the run finished was admitted")
    return f"{len(sent)} message(s) delivered at " + ", ".join(sorted({m.boundary for m in result.messages()}))


# --- checks: approvals --------------------------------------------------------------------------------------


class _Approvals:
    """Answers approval requests of one expected kind exactly once and checks duplicates are refused."""

    def __init__(self, kind: ApprovalKind, *, deny: bool = False) -> None:
        self.kind = kind
        self.deny = deny
        self.seen: list[ApprovalRequest] = []

    def __call__(self, ev: Event) -> None:
        if not isinstance(ev, ApprovalRequest):
            return
        self.seen.append(ev)
        if ev.kind is not self.kind:
            ev.deny("unexpected kind in the conformance suite")
            _fail(f"expected a {self.kind.value} request, got {ev.kind.value}: {ev.title!r}")
        _expect(ev.state == "pending", f"a published approval request is {ev.state}, not pending")
        first: Callable[[], None]
        if self.deny:
            first = lambda: ev.deny("denied by the conformance suite")  # noqa: E731
        elif ev.kind is ApprovalKind.QUESTION:
            choice = ev.choices[0].key if ev.choices else QUESTION_CHOICES[0]
            first = lambda: ev.answer(choice)  # noqa: E731
        else:
            first = ev.approve
        first()
        for label, again in (("the same answer again", first), ("deny()", lambda: ev.deny("second answer"))):
            try:
                again()
            except ApprovalResolvedError:
                continue
            except Exception as exc:
                _fail(f"answering twice ({label}) raised {type(exc).__name__}, not ApprovalResolvedError")
            _fail(f"answering twice ({label}) was accepted; responses are exactly-once")


def _asking_policy(desc: Descriptor, kind: ApprovalKind, timeout: float) -> Policy:
    ac = desc.approvals
    if kind not in ac.kinds:
        _skip(f"the driver does not declare {kind.value} requests")
    if kind is ApprovalKind.QUESTION:
        if QuestionMode.ASK not in ac.question_modes:
            _skip("the driver cannot ask questions (QuestionMode.ASK is not declared)")
        approvals = ApprovalPolicy(question=QuestionMode.ASK)
    elif kind is ApprovalKind.PERMISSION:
        if ApprovalMode.ASK not in ac.permission_modes:
            _skip("the driver cannot ask for permission (ApprovalMode.ASK is not declared)")
        approvals = ApprovalPolicy(permission=ApprovalMode.ASK)
    else:
        if ApprovalMode.ASK not in ac.plan_review_modes:
            _skip("the driver cannot ask for plan review (ApprovalMode.ASK is not declared)")
        approvals = ApprovalPolicy(plan_review=ApprovalMode.ASK)
    return Policy(approvals=replace(approvals, timeout=timeout, on_reject=FallbackAction.ABORT))


async def _check_approval(h: _Harness, kind: ApprovalKind) -> str | None:
    policy = _asking_policy(h.desc, kind, h.settings.timeout)
    reply = f"Conformance answer after a {kind.value} request."
    choices = QUESTION_CHOICES if kind is ApprovalKind.QUESTION else ()
    agent = await h.start(ModelRun(reply=reply, approval=kind, choices=choices))
    answers = _Approvals(kind)
    out = await h.run(agent.send(h.prompt(0), policy=policy), answers)
    _expect(len(answers.seen) == 1, f"the model asked once, but {len(answers.seen)} approval request(s) arrived")
    req = answers.seen[0]
    _expect(req.run_id == out.stream.run_id, f"ApprovalRequest.run_id {req.run_id!r} is not the run's id")
    if choices:
        offered = {c.key for c in req.choices} | {c.label for c in req.choices}
        _expect(set(choices) <= offered, f"the question offers {sorted(offered)}; the model offered {list(choices)}")
    resolved = [
        n for n in out.of(Notice) if n.kind == NoticeKind.APPROVAL_RESOLVED.value and n.data.get("request_id") == req.id
    ]
    _expect(len(resolved) == 1, f"{len(resolved)} approval.resolved notices for {req.id}; expected exactly one")
    result = _success(out, f"a run with an approved {kind.value} request")
    _same_text(result.text, reply, f"a run with an approved {kind.value} request")
    return None


async def check_approval_permission(h: _Harness) -> str | None:
    """A permission request is published once, answered once, and a second answer raises ApprovalResolvedError."""
    return await _check_approval(h, ApprovalKind.PERMISSION)


async def check_approval_plan_review(h: _Harness) -> str | None:
    """A plan-review request is published once, answered once, and a second answer raises ApprovalResolvedError."""
    return await _check_approval(h, ApprovalKind.PLAN_REVIEW)


async def check_approval_question(h: _Harness) -> str | None:
    """A question carries its choices, is answered once, and a second answer raises ApprovalResolvedError."""
    return await _check_approval(h, ApprovalKind.QUESTION)


async def check_approval_denied(h: _Harness) -> str | None:
    """Denying a request under on_reject=ABORT ends the run with ApprovalDenied and a partial result."""
    kinds = h.desc.approvals.kinds
    kind = next(
        (k for k in (ApprovalKind.PERMISSION, ApprovalKind.PLAN_REVIEW, ApprovalKind.QUESTION) if k in kinds), None
    )
    if kind is None:
        _skip("the driver declares no approval kinds")
    policy = _asking_policy(h.desc, kind, h.settings.timeout)
    choices = QUESTION_CHOICES if kind is ApprovalKind.QUESTION else ()
    agent = await h.start(ModelRun(reply="This answer must not be reached.", approval=kind, choices=choices))
    answers = _Approvals(kind, deny=True)
    out = await h.run(agent.send(h.prompt(0), policy=policy), answers)
    _expect(len(answers.seen) == 1, f"{len(answers.seen)} approval request(s) arrived; expected one")
    _expect(
        isinstance(out.error, ApprovalDenied),
        f"a denied {kind.value} request under on_reject=ABORT must end in ApprovalDenied; got {out.describe_error()}",
    )
    assert isinstance(out.error, RunError)
    _expect(out.error.reason is FailureReason.APPROVAL_DENIED, f"RunError.reason is {out.error.reason}")
    _expect(out.error.result is not None, "the RunError carries no partial result")
    return f"denied a {kind.value} request"


# --- checks: checkpoints and cancellation -------------------------------------------------------------------


async def check_checkpoints(h: _Harness) -> str | None:
    """A healthy thread run saves a checkpoint; a failed run keeps it; the thread then continues."""
    if not h.desc.resume:
        _skip("the driver does not declare resume")
    key = "conformance-thread"
    agent = await h.start(
        ModelRun(reply="Conformance answer one."),
        ModelRun(reply="This run fails.", fail=True),
        ModelRun(reply="Conformance answer three."),
    )
    thread = agent.thread(key)
    _expect(await thread.checkpoint() is None, "a new thread already has a checkpoint")
    first = await h.run(thread.send(h.prompt(0)), thread_key=key)
    _same_text(_success(first, "the first thread run").text, "Conformance answer one.", "the first thread run")
    saved = await thread.checkpoint()
    _expect(saved is not None, "a healthy thread run saved no checkpoint although the driver declares resume")
    assert saved is not None
    _expect(bool(saved.session_id), "the checkpoint has an empty session id")
    _expect(saved.driver == h.driver_name, f"the checkpoint names driver {saved.driver!r}, not {h.driver_name!r}")
    second = await h.run(thread.send(h.prompt(1)), thread_key=key)
    _expect(
        isinstance(second.error, RunError),
        f"a run whose model request fails must end in a RunError; got {second.describe_error()}",
    )
    assert isinstance(second.error, RunError)
    _expect(second.error.result is not None, "the failed run's RunError carries no partial result")
    kept = await thread.checkpoint()
    _expect(
        kept is not None and kept.session_id == saved.session_id and kept.run_id == saved.run_id,
        f"a failed run replaced the healthy checkpoint: {saved} became {kept}",
    )
    third = await h.run(thread.send(h.prompt(2)), thread_key=key)
    _same_text(_success(third, "a thread run after a failure").text, "Conformance answer three.", "the third run")
    latest = await thread.checkpoint()
    _expect(latest is not None and bool(latest.session_id), "the run after the failure saved no checkpoint")
    return None


async def check_cancellation(h: _Harness) -> str | None:
    """Cancelling a live run ends it with RunCancelled, Done last, and pending input failed as cancelled."""
    agent = await h.start(ModelRun(reply="This answer must not be reached.", hold=True))
    stream = agent.send(h.prompt(0))
    watch = h.watch(stream)
    sent: dict[str, str] = {}
    try:
        await h.reach_hold(watch)
        boundaries = h.desc.messages.boundaries
        if boundaries:
            text = "A conformance note that may never arrive."
            when = Timing.AFTER_TURN if Boundary.TURN_END in boundaries else Timing.SOON
            await stream.send(text, id="conformance-cancel", when=when)
            sent["conformance-cancel"] = text
        stream.cancel()
        stream.cancel()
    finally:
        h.release()
    out = await watch.finish()
    _audit(out, texts=sent)
    _expect(isinstance(out.error, RunCancelled), f"a cancelled run must raise RunCancelled; got {out.describe_error()}")
    assert isinstance(out.error, RunCancelled)
    _expect(out.error.result is not None, "RunCancelled carries no partial result")
    final = out.error.result
    assert final is not None
    for m in final.messages():
        if m.state is MessageState.FAILED:
            _expect(m.reason is MessageFailure.CANCELLED, f"{m.id!r} failed with {m.reason.value}, not cancelled")
    return None


# --- the suite ----------------------------------------------------------------------------------------------

CheckFn = Callable[[_Harness], Awaitable[str | None]]

CHECKS: dict[str, CheckFn] = {
    "event_ordering": check_event_ordering,
    "results": check_results,
    "policy_rejected": check_policy_rejected,
    "policy_accepted": check_policy_accepted,
    "structured_output": check_structured_output,
    "messages_soon": check_messages_soon,
    "messages_after_turn": check_messages_after_turn,
    "messages_interrupt": check_messages_interrupt,
    "message_lifecycle": check_message_lifecycle,
    "approval_permission": check_approval_permission,
    "approval_plan_review": check_approval_plan_review,
    "approval_question": check_approval_question,
    "approval_denied": check_approval_denied,
    "checkpoints": check_checkpoints,
    "cancellation": check_cancellation,
}


async def _read_descriptor(settings: _Settings) -> tuple[str, Descriptor]:
    async with contextlib.AsyncExitStack() as stack:
        case = ConformanceCase(check="descriptor")
        driver = await _make_driver(settings, case, stack)
        desc = driver.descriptor()
        if not isinstance(desc, Descriptor):
            raise TypeError(f"{type(driver).__name__}.descriptor() returned {type(desc).__name__}, not a Descriptor")
        return driver.name, desc


async def _run_check(name: str, fn: CheckFn, desc: Descriptor, settings: _Settings) -> CheckResult:
    t0 = time.monotonic()
    status: Status = "pass"
    reason = ""
    try:
        async with contextlib.AsyncExitStack() as stack:
            h = _Harness(name, desc, settings, stack)
            try:
                async with asyncio.timeout(settings.timeout):
                    reason = await fn(h) or ""
            finally:
                await h.close()
    except _Skip as exc:
        status, reason = "skip", str(exc)
    except _Breach as exc:
        status, reason = "fail", str(exc)
    except TimeoutError:
        status, reason = "fail", f"the check did not finish within {settings.timeout:g} s"
    except Exception as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        status = "fail"
        reason = f"{type(exc).__name__}: {exc} (at {where.filename.rsplit('/', 1)[-1]}:{where.lineno})"
    return CheckResult(name, status, reason, time.monotonic() - t0)


async def run_driver_conformance(
    factory: DriverSource,
    *,
    prompt_for: Callable[[ConformanceCase, int], str] = default_prompt,
    agent_options: Mapping[str, Any] | Callable[[ConformanceCase], Mapping[str, Any]] | None = None,
    checks: Iterable[str] | None = None,
    skip: Mapping[str, str] | Iterable[str] = (),
    timeout: float = 60.0,
    raise_on_failure: bool = True,
) -> ConformanceReport:
    """Run the conformance checks on the driver that ``factory`` makes and return the report.

    ``factory`` returns a fresh Driver (or an awaitable of one, or a context manager yielding one) and may take the
    check's ConformanceCase; ``prompt_for(case, index)`` makes each run's prompt; ``agent_options`` (a mapping or a
    function of the case) is passed to ``Agent(...)``; ``checks`` selects checks by name and ``skip`` skips some
    (a mapping gives the reasons); ``timeout`` bounds each check in seconds.
    """
    names = list(CHECKS) if checks is None else list(checks)
    skips = dict(skip) if isinstance(skip, Mapping) else dict.fromkeys(skip, "skipped by the caller")
    unknown = sorted({*names, *skips} - set(CHECKS))
    if unknown:
        raise ValueError(f"unknown conformance check(s) {unknown}; known: {sorted(CHECKS)}")
    if not callable(factory):
        raise TypeError("run_driver_conformance() needs a factory that returns a fresh Driver")
    if not (isinstance(timeout, int | float) and timeout > 0):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    settings = _Settings(factory, prompt_for, agent_options, float(timeout))
    driver_name, desc = await _read_descriptor(settings)
    results: list[CheckResult] = []
    for name in names:
        if name in skips:
            results.append(CheckResult(name, "skip", skips[name]))
            continue
        results.append(await _run_check(name, CHECKS[name], desc, settings))
    report = ConformanceReport(driver=driver_name, descriptor=desc, results=tuple(results))
    if raise_on_failure:
        report.raise_for_failures()
    return report
