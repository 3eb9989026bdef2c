"""The reference driver, scripted per case: its n-th run plays the case's n-th ModelRun."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from adaptor_nb import ApprovalKind
from adaptor_nb.driver import Descriptor, DriverOutcome, Invocation, RunContext
from adaptor_nb.drivers import reference

from ._cases import ConformanceCase, Hold, ModelRun

_REFERENCE_FOLLOW_UPS = 8


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
    if run.host_calls:
        steps.append(ref.HostCalls(*(ref.HostCall(name, dict(args)) for name, args in run.host_calls)))
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
