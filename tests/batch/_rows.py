"""A reference driver that scripts each run from directives in its prompt, for batch tests and benchmarks.

``[reply:{...}]`` answers with that structured value; ``[transient:N]`` fails the first N attempts of this prompt
with a retryable provider error; ``[fail:why]`` fails for good; ``[bad]`` answers a value the schema rejects;
``[delay:S]`` waits S seconds; ``[gate]`` waits for ``open_gates()``; ``[cost:M]`` reports M thousandths of a dollar.
Without directives the reference driver's default (a sample of the schema) answers.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from typing import Any

from pydantic import BaseModel

from adaptor_nb import Agent, ApprovalKind, Usage
from adaptor_nb.drivers import reference

_DIRECTIVE = re.compile(r"\[(\w+)(?::([^\]]*))?\]")


class Ticket(BaseModel):
    label: str
    priority: int
    urgent: bool


class _CostContext:
    """Passes everything through to the real run context, adding a cost to each turn's usage."""

    def __init__(self, ctx: Any, milli: int) -> None:
        self._ctx = ctx
        self._milli = milli

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)

    async def turn_end(self, *, usage: Usage | None = None, **kw: Any) -> Any:
        if usage is not None:
            usage = Usage(usage.input_tokens, usage.output_tokens, usage.cached_input_tokens, self._milli)
        return await self._ctx.turn_end(usage=usage, **kw)


class RowDriver(reference.Driver):
    """Counts attempts per prompt and live runs (``peak`` is the most seen at once)."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__()
        self.delay = delay
        self.attempts: Counter[str] = Counter()
        self.live = 0
        self.peak = 0
        self.gate = asyncio.Event()
        self.waiting = 0
        self.on_wait: list[Any] = []  # called each time a run starts waiting at the gate

    def open_gates(self) -> None:
        self.gate.set()

    async def run(self, invocation: Any, ctx: Any) -> Any:
        prompt = invocation.prompt
        self.attempts[prompt] += 1
        steps: list[Any] = []
        milli = 0
        if self.delay:
            steps.append(reference.Delay(self.delay))
        for name, arg in _DIRECTIVE.findall(prompt):
            if name == "reply":
                value = json.loads(arg.replace("'", '"'))
                steps += [reference.Text(json.dumps(value)), reference.Structured(value)]
            elif name == "transient" and self.attempts[prompt] <= int(arg):
                steps.append(reference.Fail("provider overloaded (529)", retryable=True, retry_after=0))
            elif name == "fail":
                steps.append(reference.Fail(arg or "scripted failure"))
            elif name == "bad":
                steps += [reference.Text('{"label": 3}'), reference.Structured({"label": 3})]
            elif name == "delay":
                steps.append(reference.Delay(float(arg)))
            elif name == "tool":
                approval = reference.ToolUse(arg, {"cmd": "ls"}, {"ok": True}, approval=ApprovalKind.PERMISSION)
                steps.append(approval)
            elif name == "cost":
                milli = int(arg)
        answered = any(n in ("reply", "bad") for n, _ in _DIRECTIVE.findall(prompt))
        if steps and not answered and invocation.output_schema is not None:
            value = reference.sample(invocation.output_schema.schema)
            steps += [reference.Text(json.dumps(value)), reference.Structured(value)]
        self.live += 1
        self.peak = max(self.peak, self.live)
        try:
            if "[gate]" in prompt:
                self.waiting += 1
                for hook in self.on_wait:
                    hook()
                await self.gate.wait()
            inner = reference.Driver(scenario=reference.scenario(reference.Turn(*steps)) if steps else None)
            return await inner.run(invocation, _CostContext(ctx, milli) if milli else ctx)
        finally:
            self.live -= 1


def row_agent() -> Agent:
    """A picklable zero-argument factory (module level) for remote executors."""
    return Agent(RowDriver())
