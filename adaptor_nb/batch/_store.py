"""``map_rows(..., thread_store=...)``: the rows' Agents keep their per-row Threads in the given store.

The runner (an Agent, or a zero-argument factory) is wrapped in a factory that builds an Agent with the runner's
driver and options and ``thread_store`` instead of its own. The batch owns those Agents (it closes each after its
round), so an Agent passed in is never changed. With a picklable factory and a picklable store (``Postgres``, the
SQLite store on a shared disk) the wrapper pickles too, so every Dask worker resolves the same store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._errors import ConfigError

if TYPE_CHECKING:
    from .._agent import Agent

_STORE_METHODS = ("resolve", "acquire_lease", "finalize", "release_lease")


def like(agent: Agent, store: Any) -> Agent:
    """A new Agent with ``agent``'s driver and options, keeping its threads in ``store``."""
    from .._agent import Agent

    return Agent(agent.driver, **{**agent.engine.options, "thread_store": store})


@dataclass(frozen=True)
class WithStore:
    """A runner whose Agents keep their threads in ``store``: ``runner`` is an Agent or a zero-argument factory."""

    runner: Any
    store: Any

    def __call__(self) -> Agent:
        from .._agent import Agent

        base = self.runner if isinstance(self.runner, Agent) else self.runner()
        if not isinstance(base, Agent):
            raise ConfigError(f"the runner factory returned {type(base).__name__}, not an Agent", option="runner")
        return like(base, self.store)


def with_thread_store(runner: Any, store: Any) -> Any:
    """``runner`` as map_rows uses it when given ``thread_store=store`` (``runner`` itself for None)."""
    if store is None:
        return runner
    missing = [m for m in _STORE_METHODS if not callable(getattr(store, m, None))]
    if missing:
        raise ConfigError(
            f"thread_store must be a thread store (adaptor_nb.threadstore), got {type(store).__name__} "
            f"without {', '.join(missing)}()",
            option="thread_store",
        )
    return WithStore(runner, store)


__all__ = ["WithStore", "like", "with_thread_store"]
