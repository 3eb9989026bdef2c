"""The protocol of run service providers (§12): ``run_services=[provider, ...]`` attach to each run before launch."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .._events import Event
from .._result import ServiceReport, SubagentResult

RunEventSource = Callable[[str, asyncio.Event], AsyncIterator[Event]]
"""``source(run_id, stop)``: events folded into the run's one stream; it flushes and ends once ``stop`` is set."""


@dataclass(frozen=True)
class RunAttachment:
    """What a provider attaches to one run. ``preamble`` goes in front of the prompt (and is not part of thread
    compatibility); ``results`` is called before detach; ``services`` are reported in ``Result.services()``."""

    preamble: str = ""
    results: Callable[[], Sequence[SubagentResult]] | None = None
    services: Sequence[ServiceReport] = ()
    events: RunEventSource | None = None


@runtime_checkable
class RunServiceProvider(Protocol):
    """Attaches run-scoped services (``run_services=[...]``)."""

    async def attach_run(self, run_id: str) -> RunAttachment: ...

    async def detach_run(self, run_id: str) -> None: ...
