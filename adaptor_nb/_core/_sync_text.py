"""What to say when a run is started outside an event loop."""

from __future__ import annotations

_HANDLE = {"send": "agent", "Thread.send": "thread", "Standby.send": "standby"}


def outside_loop_message(where: str) -> str:
    """One sentence naming the call that works from where the user is, for ``send``-like entry points."""
    handle = _HANDLE.get(where, "agent")
    if where == "Standby.send":
        return (
            f"{where}() was called outside an event loop: a Standby lives on one loop, so use it from async code "
            "(in a notebook cell, await it)"
        )
    return (
        f"{where}() was called outside an event loop: in a plain script use {handle}.run_sync(prompt), or "
        f"adaptor_nb.run_sync(lambda: {handle}.send(prompt).result()) (the lambda makes send() run inside the loop); "
        f"in a notebook cell, await {handle}.send(prompt)"
    )
