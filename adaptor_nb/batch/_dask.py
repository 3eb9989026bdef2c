"""Scale-out on Dask distributed: each worker builds its own Agent from a picklable factory."""

from __future__ import annotations

import asyncio
import importlib
import pickle
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._errors import ConfigError
from ._attempt import run_row
from ._executor import RowSettings
from ._row import RowJob, RowOutcome

if TYPE_CHECKING:
    from .._agent import Agent

# Agents built on this worker process, by the pickled bytes of their factory.
_WORKER_AGENTS: dict[bytes, Agent] = {}


def _dumps(value: Any) -> bytes:
    """cloudpickle when present (dask ships it; it pickles notebook-defined factories by value), else pickle."""
    try:
        cloudpickle: Any = importlib.import_module("cloudpickle")
    except ImportError:
        return pickle.dumps(value)
    return bytes(cloudpickle.dumps(value))


def _worker_agent(factory: Callable[[], Agent]) -> Agent:
    token = _dumps(factory)
    agent = _WORKER_AGENTS.get(token)
    if agent is None or agent.closed:
        agent = _WORKER_AGENTS[token] = factory()
    return agent


async def _remote_row(factory: Callable[[], Agent], job: RowJob, settings: RowSettings) -> RowOutcome:
    """The task a worker runs (an async function, so it runs on the worker's event loop)."""
    agent = _worker_agent(factory)
    s = settings
    return await run_row(
        agent, job, s.schema, retries=s.retries, timeout=s.timeout, backoff=s.backoff, options=s.options
    )


def check_remote(factory: Callable[[], Agent] | None, settings: RowSettings) -> None:
    """A remote executor needs a picklable factory (each worker builds its own Agent) and a picklable schema."""
    if factory is None:
        raise ConfigError(
            "a remote executor needs a picklable zero-argument factory as the runner, not an Agent", option="runner"
        )
    try:
        _dumps((factory, settings))
    except Exception as exc:
        raise ConfigError(
            f"the runner factory and schema must be picklable for a remote executor: {exc}", option="runner"
        ) from exc


class DaskExecutor:
    """Run rows on a ``dask.distributed.Client``'s workers.

    Each row is submitted under its idempotency key (``RowJob.key``), so a row the scheduler re-runs after a
    worker dies yields one result. The runner must be a picklable zero-argument factory.
    """

    needs_factory = True

    def __init__(self, client: Any) -> None:
        self.client = client
        self._factory: Callable[[], Agent] | None = None
        self._settings = RowSettings(schema=None)

    async def open(self, agent: Agent | None, factory: Callable[[], Agent] | None, settings: RowSettings) -> None:
        check_remote(factory, settings)
        self._factory = factory
        self._settings = settings

    async def run(self, job: RowJob) -> RowOutcome:
        assert self._factory is not None, "open() first"
        future = self.client.submit(_remote_row, self._factory, job, self._settings, key=job.key, pure=False)
        try:
            outcome: RowOutcome = await asyncio.to_thread(future.result)
        except asyncio.CancelledError:
            future.cancel()
            raise
        return outcome

    async def close(self) -> None:
        self._factory = None
