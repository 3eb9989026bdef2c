"""How long an approval card waits for its person, and what the card says about the wait.

With a front end (JupyterLab, Notebook, VS Code) a card waits until someone answers it: a teacher may talk
through it for minutes. A headless run (nbconvert, nbval, papermill) has nobody to answer, so its requests
keep a bounded wait, and the card says so. ``--approval-timeout`` and ``%agent config`` set the wait.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .._policy import DEFAULT_APPROVAL_TIMEOUT, Policy

HEADLESS_APPROVAL_TIMEOUT = DEFAULT_APPROVAL_TIMEOUT
NO_LIMIT = "waits for your answer (no time limit)"


@dataclass(frozen=True)
class Pace:
    """The approval timeout a cell runs with (None: keep the runner's own policy) and the card's note on it."""

    seconds: float | None
    note: str


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _headless(seconds: float) -> str:
    return (
        f"headless run (nbconvert, nbval, papermill): nobody can answer here, so this request expires after "
        f"{_seconds(seconds)}; --approval-timeout changes that"
    )


def approval_pace(cell: float | None, config: float | None, live: bool, policy: Policy | None) -> Pace:
    """The wait for a cell's approvals: the cell's ``--approval-timeout``, else ``%agent config``'s, else the
    runner's own explicit policy, else no limit with a front end and a bounded one headless."""
    chosen = cell if cell is not None else config
    own = policy.approvals.timeout if policy is not None else None
    if chosen is None and own is not None:
        return Pace(None, "" if live or own < 0 else _headless(own))
    if chosen is None and not live:
        return Pace(None, _headless(HEADLESS_APPROVAL_TIMEOUT))  # the core's default wait is the bounded one
    if chosen is None:
        chosen = -1.0
    if chosen < 0:
        return Pace(chosen, NO_LIMIT)
    return Pace(chosen, "" if live else _headless(chosen))


def with_approval_timeout(policy: Policy | None, seconds: float) -> Policy:
    """``policy`` (the runner's, so nothing else of it is lost) with its approval timeout set to ``seconds``."""
    base = policy if policy is not None else Policy()
    return replace(base, approvals=replace(base.approvals, timeout=seconds))


def runner_policy(agent: Any) -> Policy | None:
    """The policy an Agent runs with by default (None for an object without settings)."""
    policy = getattr(getattr(getattr(agent, "settings", None), "run", None), "policy", None)
    return policy if isinstance(policy, Policy) else None


def describe_timeout(value: float | None) -> str:
    """``%agent config``'s words for an approval timeout."""
    if value is None:
        return (
            "none while a front end shows the card; "
            f"{_seconds(HEADLESS_APPROVAL_TIMEOUT)} in headless runs (nbconvert, nbval, papermill)"
        )
    if value < 0:
        return "none: every approval waits for its answer"
    return _seconds(value)
