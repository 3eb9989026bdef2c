"""Where rows run: the in-kernel executor (this event loop) and the interface other executors follow."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ._attempt import run_row
from ._row import RowJob, RowOutcome

if TYPE_CHECKING:
    from .._agent import Agent


@dataclass(frozen=True)
class RowSettings:
    """What every row of a batch shares; picklable so it can travel to remote workers."""

    schema: Any
    retries: int = 1
    timeout: float | None = None
    backoff: float = 0.5
    options: dict[str, Any] = field(default_factory=dict)


class Executor(Protocol):
    """Runs one row to an outcome. ``open`` is called once before the first row, ``close`` after the last."""

    async def open(self, agent: Agent | None, factory: Callable[[], Agent] | None, settings: RowSettings) -> None: ...

    async def run(self, job: RowJob) -> RowOutcome: ...

    async def close(self) -> None: ...


class InKernelExecutor:
    """Runs rows as tasks on the current event loop, on one shared Agent."""

    def __init__(self) -> None:
        self._agent: Agent | None = None
        self._settings = RowSettings(schema=None)
        self.on_stream: Callable[[RowJob, Any], None] | None = None
        """Called with each row attempt's Stream as it starts (set by the progress view)."""

    async def open(self, agent: Agent | None, factory: Callable[[], Agent] | None, settings: RowSettings) -> None:
        if agent is None:
            raise ValueError("InKernelExecutor needs an Agent")
        self._agent = agent
        self._settings = settings

    async def run(self, job: RowJob) -> RowOutcome:
        assert self._agent is not None, "open() first"
        s = self._settings
        return await run_row(
            self._agent,
            job,
            s.schema,
            retries=s.retries,
            timeout=s.timeout,
            backoff=s.backoff,
            options=s.options,
            on_stream=self.on_stream,
        )

    async def close(self) -> None:
        self._agent = None
