"""Conveniences: typed structured runs (run_as) and a synchronous runner for plain scripts."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar, Unpack

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
    """Run a coroutine (or a zero-argument async function) to completion from synchronous code.

    Refuses inside a running event loop (in a notebook, use ``await`` instead).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError("run_sync() cannot be used inside a running event loop; use `await` instead")
    aw = fn() if callable(fn) else fn

    async def main() -> T:
        return await aw

    return asyncio.run(main())


from ._naming import publish as _publish  # noqa: E402

_publish(__name__, globals())
