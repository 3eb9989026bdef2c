"""``%%agent --map DF``: run the cell's template once per row of a DataFrame, with the batch progress view."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._errors import ConfigError
from ._args import CellOptions, OptionError
from ._sigint import TerminalInterrupts

if TYPE_CHECKING:
    from ._session import NotebookSession

CANCEL_GRACE = 10.0
TICK = 0.2
"""How often the waiting cell wakes up, so Kernel > Interrupt is seen promptly."""


def map_frame(opts: CellOptions, namespace: dict[str, Any]) -> Any:
    """The DataFrame ``--map`` names, or an OptionError saying what is wrong with it."""
    name = opts.map or ""
    if name not in namespace:
        raise OptionError(f"%%agent: --map {name}: no variable named {name!r} in the notebook")
    value = namespace[name]
    try:
        import pandas as pd
    except ImportError:
        raise OptionError("%%agent: --map needs pandas (pip install pandas)") from None
    if not isinstance(value, pd.DataFrame):
        raise OptionError(f"%%agent: --map {name} is a {type(value).__name__}, not a pandas DataFrame")
    return value


def map_schema(opts: CellOptions, namespace: dict[str, Any], resolve: Callable[[str, dict[str, Any]], Any]) -> Any:
    """The ``--schema`` of a mapped cell (evaluated by ``resolve``, the cell's schema rules): a pydantic model class
    (one row, one value), or None."""
    if not opts.schema:
        return None
    from pydantic import BaseModel

    value = resolve(opts.schema, namespace)
    if not (isinstance(value, type) and issubclass(value, BaseModel)):
        raise OptionError(
            f"%%agent: --schema {opts.schema} must be a pydantic model class with --map (each row gives one value), "
            f"got {value!r}"
        )
    return value


async def run_map(
    session: NotebookSession,
    opts: CellOptions,
    body: str,
    namespace: dict[str, Any],
    resolve_schema: Callable[[str, dict[str, Any]], Any],
) -> None:
    """Run one ``%%agent --map`` cell; binds the result frame to ``--out`` and the Batch to ``<out>_batch``."""
    from ..batch import map_rows

    frame = map_frame(opts, namespace)
    schema = map_schema(opts, namespace, resolve_schema)
    template = body.strip()
    if not template:
        raise OptionError("%%agent: the cell body is the prompt template, and it is empty")
    plan = await session.plan(dataclasses.replace(opts, thread=None), namespace)
    call = dict(plan.call)
    timeout = call.pop("timeout", None)
    try:
        batch = map_rows(
            plan.runner,
            frame,
            template,
            schema,
            concurrency=opts.concurrency or 4,
            thread=opts.thread,
            timeout=timeout,
            options=call,
            progress=not opts.quiet,
        )
    except ConfigError as exc:
        raise OptionError(f"%%agent --map: {exc}") from None
    out = opts.out
    namespace[f"{out}_batch"] = batch
    batch.on_frame.append(lambda f: namespace.__setitem__(out, f))
    from IPython import get_ipython

    interrupts = TerminalInterrupts(get_ipython())
    try:
        with interrupts:
            namespace[out] = await _wait(batch)
    except KeyboardInterrupt:
        namespace[out] = batch.frame
        await interrupts.settle()
        raise


async def _wait(batch: Any) -> Any:
    """Await the batch; on Kernel > Interrupt cancel it, keep the partial frame and raise KeyboardInterrupt."""
    waiter = asyncio.ensure_future(batch._result())
    try:
        while not waiter.done():
            await asyncio.wait({waiter}, timeout=TICK)
    except (asyncio.CancelledError, KeyboardInterrupt):
        task = asyncio.current_task()
        if task is not None:
            while task.uncancel():
                pass
        batch.cancel("interrupted")
        try:
            await asyncio.wait_for(asyncio.shield(waiter), CANCEL_GRACE)
        except BaseException:
            waiter.cancel()
        raise _one_line(KeyboardInterrupt("the %%agent --map batch was cancelled; the partial frame is kept")) from None
    return waiter.result()


def _one_line(err: BaseException) -> BaseException:
    """Make IPython show ``err`` as one line instead of the awaiting machinery's frames."""
    line = f"\x1b[0;31m{type(err).__name__}\x1b[0m: {err}"
    err._render_traceback_ = lambda: [line]  # type: ignore[attr-defined]
    return err
