"""The per-check harness: makes the driver and Agent for a case and watches runs."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from adaptor_nb import (
    Agent,
    Event,
    MessageState,
    MessageUpdate,
    Result,
    Stream,
    TextDelta,
    Thinking,
    ToolCall,
)
from adaptor_nb.driver import Descriptor, Driver
from adaptor_nb.drivers import reference

from ._audit import _audit, _Outcome
from ._cases import ConformanceCase, ModelRun
from ._reference import _ScriptedReference
from ._verdicts import _expect, _fail

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
    _expect(got.strip() == want.strip(), f"{what}: result.text is {got!r}, the model was scripted to answer {want!r}")
