"""A ``map_rows`` batch at work: each round hands its rows to the executor through admission, accounts for every
finished row and assembles the frame."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._cache import RowCache
from ._executor import Executor, RowSettings
from ._progress import TerminalLine
from ._row import FAILED, RowJob, RowOutcome

if TYPE_CHECKING:
    import pandas

    from .._agent import Agent
    from ._map import Batch


@dataclass(frozen=True)
class Runner:
    """The Agent a batch starts on, and where a later round's Agent comes from."""

    agent: Agent
    given: Any
    """What ``map_rows`` was given: that Agent, or the zero-argument factory that made it."""
    factory: Callable[[], Agent] | None = None
    owned: bool = False
    """The batch made the Agent (with the factory): it closes it after each round and makes a new one."""


@dataclass(eq=False)
class BatchRun:
    """What a batch keeps across its rounds (the first pass, then each ``retry_failed()``): the rows, their cache
    keys and outcomes, the executor and the Agent the next round uses."""

    index: Any
    jobs: list[RowJob]
    keys: list[str]
    executor: Executor
    settings: RowSettings
    runner: Runner
    cache: Path | None
    concurrency: int
    max_cost_usd: float | None
    on_error: str
    view: Any = None
    terminal: bool = False
    outcomes: list[RowOutcome | None] = field(init=False)
    _fresh: list[Agent] = field(init=False)  # the Agent the next round uses; a factory's is rebuilt for a retry
    _rounds: int = 0

    def __post_init__(self) -> None:
        self.outcomes = [None] * len(self.jobs)
        self._fresh = [self.runner.agent]

    async def first_pass(self, batch: Batch) -> tuple[pandas.DataFrame, list[str]]:
        """Run every row; the frame, and the failures when ``on_error="raise"``."""
        if self.terminal:
            batch.progress.listeners.append(TerminalLine())
        if self.view is not None:
            self.view.follow(batch)
        try:
            failures = await self.run_round(batch, list(range(len(self.jobs))), self.jobs)
            frame = self.frame()
            batch.frame = frame
        finally:
            if self.view is not None:
                await self.view.finish()
        return frame, failures

    async def retry_failed(self, batch: Batch) -> pandas.DataFrame:
        """Run the failed rows again under new keys; the frame with their new outcomes."""
        positions = [i for i, o in enumerate(self.outcomes) if o is not None and o.status == FAILED]
        if not positions:
            return self.frame()
        self._rounds += 1
        again = [dataclasses.replace(self.jobs[i], key=f"{self.jobs[i].key}-retry{self._rounds}") for i in positions]
        batch.progress.reopen([j.label for j in again])
        for i in positions:
            self.outcomes[i] = None
        batch._rearm()
        try:
            await self.run_round(batch, positions, again)
        finally:
            if self.view is not None:
                await self.view.finish()
        return self.frame()

    async def run_round(self, batch: Batch, positions: list[int], jobs: list[RowJob]) -> list[str]:
        """The executor hand-off: open it on the round's Agent, run the rows, close it; rows never started are
        ``skipped``. Returns the failures when ``on_error="raise"``."""
        rows = _Round(self, batch, RowCache(self.cache) if self.cache is not None else None)
        current = self._fresh.pop() if self._fresh else self.runner.given()
        await self.executor.open(current, self.runner.factory, self.settings)
        try:
            await rows.run(positions, jobs)
        finally:
            await self.executor.close()
            if self.runner.owned:
                await current.close()
            else:
                self._fresh.append(current)
            if rows.store is not None:
                rows.store.close()
        reason = batch.cancel_reason or "not admitted"
        for i, job in zip(positions, jobs, strict=True):
            if self.outcomes[i] is None:
                self.record(batch, i, job, RowOutcome.skipped(reason), was_running=False)
        return rows.failures

    def record(self, batch: Batch, i: int, job: RowJob, out: RowOutcome, *, was_running: bool) -> None:
        """Accounting: row ``i`` ended with ``out``."""
        self.outcomes[i] = out
        batch.progress.finish(job.label, out, was_running=was_running)

    def frame(self) -> pandas.DataFrame:
        """The output frame of the outcomes so far."""
        from ._frame import build_frame

        return build_frame(self.index, [o for o in self.outcomes if o is not None], self.settings.schema)


class _Round:
    """One round's rows: admitted under the concurrency limit and the cost stop, each run as a task."""

    def __init__(self, run: BatchRun, batch: Batch, store: RowCache | None) -> None:
        self.run_state = run
        self.batch = batch
        self.store = store
        self.slots = asyncio.Semaphore(run.concurrency)
        self.live: set[asyncio.Task[None]] = set()
        self.failures: list[str] = []

    async def run(self, positions: list[int], jobs: list[RowJob]) -> None:
        """Admit the rows and wait for them, until all are done or the batch is cancelled (which cancels the rest)."""
        admission = asyncio.ensure_future(self.admit(positions, jobs))
        stop = asyncio.ensure_future(self.batch.wait_cancelled())
        await asyncio.wait({admission, stop}, return_when=asyncio.FIRST_COMPLETED)
        if not stop.done():
            # everything admitted: wait for the live rows, unless a cancel comes first
            while self.live and not stop.done():
                await asyncio.wait({*self.live, stop}, return_when=asyncio.FIRST_COMPLETED)
        admission.cancel()
        stop.cancel()
        for task in list(self.live):
            task.cancel()
        await asyncio.gather(admission, *self.live, return_exceptions=True)

    async def admit(self, positions: list[int], jobs: list[RowJob]) -> None:
        """Admission: a cached row finishes at once; the others wait for a slot, unless the batch was cancelled or
        the cost limit is reached (which ends admission)."""
        run, batch = self.run_state, self.batch
        for i, job in zip(positions, jobs, strict=True):
            hit = self.store.get(run.keys[i]) if self.store is not None else None
            if hit is not None:
                run.record(batch, i, job, hit, was_running=False)
                continue
            await self.slots.acquire()
            if batch.cancelled:
                self.slots.release()
                return
            if run.max_cost_usd is not None and batch.progress.cost_usd >= run.max_cost_usd:
                self.slots.release()
                batch.cancel_reason = batch.cancel_reason or (
                    f"cost limit: ${batch.progress.cost_usd:.4f} spent of max_cost_usd=${run.max_cost_usd}"
                )
                return
            batch.progress.admit(job.label)
            task = asyncio.ensure_future(self.one(i, job))
            self.live.add(task)
            task.add_done_callback(self.live.discard)

    async def one(self, i: int, job: RowJob) -> None:
        """One admitted row through the executor (its attempts and retries happen there), then its accounting."""
        run, batch = self.run_state, self.batch
        out = RowOutcome.skipped(batch.cancel_reason or "cancelled")
        try:
            out = await run.executor.run(job)
        except asyncio.CancelledError:
            out = RowOutcome.skipped(batch.cancel_reason or "cancelled")
            raise
        except Exception as exc:  # an executor failure is this row's failure, not the batch's
            out = RowOutcome(FAILED, error=f"{type(exc).__name__}: {exc}", attempts=1)
        finally:
            self.slots.release()
            run.record(batch, i, job, out, was_running=True)
        if self.store is not None:
            self.store.put(run.keys[i], out)
        if out.status == FAILED and run.on_error == "raise":
            self.failures.append(f"row {job.label!r}: {out.error}")
            batch.cancel("a row failed and on_error='raise'")
