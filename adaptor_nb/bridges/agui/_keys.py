"""Frontend thread ids to Thread keys: collision-free, stable, and not reversible without the registry."""

from __future__ import annotations

import hashlib

PREFIX = "agui-"


def thread_key(thread_id: str) -> str:
    """The Thread key for an AG-UI ``threadId``: ``agui-`` and the SHA-256 of the id (hex), the same in every process.

    Distinct ids give distinct keys (a collision would need a SHA-256 collision), any string is accepted, and the
    key reveals nothing of the id: ``RunRegistry.thread_id(key)`` gives it back for the ids it has seen.
    """
    if not isinstance(thread_id, str) or not thread_id:
        raise ValueError("an AG-UI threadId must be a non-empty string")
    return PREFIX + hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).hexdigest()
