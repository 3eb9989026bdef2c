"""The effective identity of the run a host hook is called for (workspace and service managers, run service
providers, skill providers, hosted tools)."""

from __future__ import annotations

from contextvars import ContextVar

from ._policy import Identity

_IDENTITY: ContextVar[Identity | None] = ContextVar("adaptor_nb_identity", default=None)


def identity_from_context() -> Identity | None:
    """The effective ``identity=`` of the run whose host hook is running now, or None outside a run.

    It scopes host resource lookups (whose workspace, whose secrets); it does not select a driver or route a task.
    """
    return _IDENTITY.get()


def bind_identity(identity: Identity) -> None:
    """Make ``identity`` the effective identity of the current task (and of the tasks it starts)."""
    _IDENTITY.set(identity)
