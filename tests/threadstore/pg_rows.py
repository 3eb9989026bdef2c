"""A picklable Agent factory for Dask workers: each worker's Agent keeps its threads in the same Postgres store."""

from __future__ import annotations

from dataclasses import dataclass

from adaptor_nb import Agent
from adaptor_nb.drivers import reference
from adaptor_nb.threadstore import PostgresStore


@dataclass(frozen=True)
class PostgresAgents:
    """Builds, on whichever process calls it, an Agent on the reference driver over ``store``."""

    store: PostgresStore
    workspace: str

    def __call__(self) -> Agent:
        return Agent(reference.Driver(), model="m", workspace=self.workspace, thread_store=self.store)


@dataclass(frozen=True)
class ReferenceAgents:
    """Builds an Agent on the reference driver with no store of its own (map_rows(thread_store=...) gives one)."""

    workspace: str

    def __call__(self) -> Agent:
        return Agent(reference.Driver(), model="m", workspace=self.workspace)
