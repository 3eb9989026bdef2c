"""Run service providers (§12): attached before launch, detached (bounded) before Done."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._enums import NoticeKind
from .._events import Done, Notice, RunFinished, RunStarted, TurnEnd
from .._result import ServiceReport, SubagentResult
from ..services._providers import RunAttachment, RunEventSource

if TYPE_CHECKING:
    from ._broker import Broker

CLEANUP_TIMEOUT = 10.0
_FILTERED = (RunStarted, RunFinished, TurnEnd, Done)  # lifecycle events of a source are the core's, not its


def _name(provider: Any) -> str:
    return type(provider).__name__


class RunServices:
    """The attached providers of one execution."""

    def __init__(self, providers: Sequence[Any], run_id: str, broker: Broker, timeout: float | None = None):
        self._providers = list(providers)
        self._run_id = run_id
        self._broker = broker
        self._timeout = CLEANUP_TIMEOUT if timeout is None else timeout
        self._attached: list[tuple[Any, RunAttachment]] = []
        self._stop = asyncio.Event()
        self._pumps: list[asyncio.Task[None]] = []
        self.preamble = ""

    @property
    def active(self) -> bool:
        return bool(self._attached)

    def _notice(self, text: str, data: dict[str, Any]) -> None:
        self._broker.publish_critical(Notice(kind=NoticeKind.RUNTIME.value, text=text, data=data))

    async def attach(self) -> None:
        """Attach every provider in order; raises on the first failure (those attached are detached later)."""
        preambles: list[str] = []
        for p in self._providers:
            att = await p.attach_run(self._run_id)
            if not isinstance(att, RunAttachment):
                att = RunAttachment()
            self._attached.append((p, att))
            if att.preamble:
                preambles.append(att.preamble.rstrip())
            if att.events is not None:
                self._pumps.append(asyncio.get_running_loop().create_task(self._pump(att.events)))
            self._notice(
                f"run service {_name(p)} attached",
                {"phase": "attached", "provider": _name(p), "services": [s.name for s in att.services]},
            )
        self.preamble = "".join(f"{text}\n\n" for text in preambles)

    async def _pump(self, source: RunEventSource) -> None:
        async for ev in source(self._run_id, self._stop):
            if isinstance(ev, _FILTERED) or self._broker.closed:
                continue
            await self._broker.publish(ev)

    def services(self) -> list[ServiceReport]:
        return [s for _, att in self._attached for s in att.services]

    def results(self) -> tuple[list[SubagentResult], list[str]]:
        """Every attachment's results (collected before detach) and the errors of those that failed."""
        out: list[SubagentResult] = []
        errors: list[str] = []
        for p, att in self._attached:
            if att.results is None:
                continue
            try:
                out.extend(att.results())
            except Exception as exc:
                errors.append(f"{_name(p)} results: {type(exc).__name__}: {exc}")
        return out, errors

    async def detach(self) -> list[str]:
        """Stop the event sources and detach every provider, each bounded; returns the errors."""
        errors: list[str] = []
        self._stop.set()
        if self._pumps:
            _, late = await asyncio.wait(self._pumps, timeout=self._timeout)
            for t in late:
                t.cancel()
                errors.append(f"an event source did not close within {self._timeout:g} s")
            for t in self._pumps:
                if t.done() and not t.cancelled() and t.exception() is not None:
                    exc = t.exception()
                    errors.append(f"an event source failed: {type(exc).__name__}: {exc}")
        for p, _ in reversed(self._attached):
            try:
                await asyncio.wait_for(p.detach_run(self._run_id), self._timeout)
            except TimeoutError:
                errors.append(f"{_name(p)} detach timed out after {self._timeout:g} s")
            except Exception as exc:
                errors.append(f"{_name(p)} detach: {type(exc).__name__}: {exc}")
            else:
                self._notice(f"run service {_name(p)} detached", {"phase": "detached", "provider": _name(p)})
        if errors:
            self._notice("run service cleanup failed", {"phase": "cleanup_failed", "errors": list(errors)})
        return errors
