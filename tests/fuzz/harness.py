"""Running the real drivers on the stand-in CLI (standin.py), one scripted turn at a time, and telling how it ended.

Shared by the long-line tests, the property-based fuzz test and the fuzz campaign (campaign.py).
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adaptor_nb import Agent, Done, Event, RunError
from adaptor_nb.drivers import claude, codebuddy, codex, cursor

STANDIN = str(Path(__file__).with_name("standin.py"))
DRIVERS = ("claude", "codex", "codebuddy", "cursor")
_MODES = {"claude": "stream", "codebuddy": "stream", "codex": "appserver", "cursor": "oneshot"}
# How much longer than the run's own timeout a run may take to publish its Done before it counts as a hang.
DONE_MARGIN = 15.0


def make_driver(name: str, home: Path, **fields: Any) -> Any:
    """The real driver ``name`` whose CLI is the stand-in, with a private HOME; keywords override Config."""
    command = [sys.executable, "-S", STANDIN, _MODES[name]]
    base: dict[str, Any] = {"command": command, "grace_period": 0.5, "startup_timeout": 20.0}
    base["env"] = {"HOME": str(home), **fields.pop("env", {})}
    base.update(fields)
    if name == "claude":
        return claude.Driver(claude.Config(**base))
    if name == "codebuddy":
        return codebuddy.Driver(codebuddy.Config(**base))
    if name == "codex":
        codex_home = home / "codex-home"
        codex_home.mkdir(parents=True, exist_ok=True)
        return codex.Driver(codex.Config(codex_home=str(codex_home), **base))
    return cursor.Driver(cursor.Config(**base))


def prompt_for(lines: list[str], *, exit: bool = False, flood: bool | int = False, **more: Any) -> str:
    """A prompt that makes the stand-in write ``lines`` (then flood stdout without a newline, or exit); ``more``
    are further script keys (``repeat``, ``after``; see standin.py)."""
    script = {"lines": lines, "exit": exit, "flood": flood, **more}
    return "FUZZ" + base64.b64encode(json.dumps(script).encode()).decode() + "ZZUF"


@dataclass
class Outcome:
    """How one run ended: ``kind`` is ``ok``, a RunError class name, ``crash:<type>`` or ``hang``."""

    kind: str
    done: Done | None
    events: list[Event]

    @property
    def error(self) -> BaseException | None:
        return self.done.err if self.done is not None else None


def classify(done: Done | None) -> str:
    if done is None:
        return "hang"
    if done.err is None:
        return "ok"
    if isinstance(done.err, RunError):
        message = getattr(done.err, "message", "")
        # A driver bug that the engine caught still ends the run, but it is a crash, not a clean failure.
        crashed = re.search(r"driver '[^']*' crashed: (\w+)|internal error\W+(\w+)", message)
        if crashed:
            return f"crash:{crashed.group(1) or crashed.group(2)}"
        return type(done.err).__name__
    return f"crash:{type(done.err).__name__}"


async def run_turn(agent: Agent, prompt: str, timeout: float) -> Outcome:
    """One ``send`` with ``timeout=``; its events and its Done, or ``hang`` when none came within the margin."""
    stream = agent.send(prompt, timeout=timeout)
    events: list[Event] = []

    async def collect() -> None:
        async for ev in stream.events():
            events.append(ev)

    try:
        await asyncio.wait_for(collect(), timeout + DONE_MARGIN)
    except TimeoutError:
        stream.cancel()
        return Outcome("hang", None, events)
    dones = [e for e in events if isinstance(e, Done)]
    if len(dones) != 1:
        return Outcome(f"dones:{len(dones)}", dones[-1] if dones else None, events)
    return Outcome(classify(dones[0]), dones[0], events)


def counts(kinds: Iterator[str] | list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for kind in kinds:
        out[kind] = out.get(kind, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))
