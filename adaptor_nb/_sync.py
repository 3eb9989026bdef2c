"""Conveniences: typed structured runs (run_as) and a synchronous runner for plain scripts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar, Unpack

from ._core._background import BACKGROUND
from ._core._options import RunAsOptions, SendOptions
from ._result import Result
from ._stream import Stream

T = TypeVar("T")


class Runner(Protocol):
    """Anything with ``send`` (an Agent or a Thread)."""

    def send(self, prompt: str, **options: Unpack[SendOptions]) -> Stream: ...


async def run_as(runner: Runner, prompt: str, tp: type[T] | Any, **options: Unpack[RunAsOptions]) -> tuple[T, Result]:
    """Run ``prompt`` with ``schema=tp`` and return the decoded value and the Result."""
    result = await runner.send(prompt, schema=tp, **options).result()
    value: T = result.decode(tp)
    return value, result


def run_sync(fn: Callable[[], Awaitable[T]] | Awaitable[T]) -> T:
    """Run async work to completion from synchronous code (a plain script) and return its value.

    ``fn`` is a coroutine, an async function, or a zero-argument callable returning an awaitable; a callable is
    called inside the loop, so ``run_sync(lambda: agent.send("hi").result())`` works. Every call shares one
    background event loop, so a Thread's provider process is kept from one call to the next; whatever is still
    open there is closed (its processes reaped) when the interpreter exits. Refuses inside a running event loop
    (in a notebook, use ``await``).
    """
    result: T = BACKGROUND.run(fn)
    return result
