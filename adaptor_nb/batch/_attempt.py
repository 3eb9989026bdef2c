"""Run one row on an Agent: send (or continue its thread), decode the schema, retry transient failures."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._errors import RunError
from ._retry import is_transient, retry_delay
from ._row import FAILED, OK, RowJob, RowOutcome
from ._workspace import row_options

if TYPE_CHECKING:
    from .._agent import Agent
    from .._result import Result


def _account(out: RowOutcome, result: Result | None) -> None:
    if result is None:
        return
    out.run_id = result.run_id or out.run_id
    out.turns += result.turns
    if result.usage is not None:
        out.cost_usd += result.usage.cost_usd
        out.input_tokens += result.usage.input_tokens
        out.output_tokens += result.usage.output_tokens


def _error_text(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, RunError) else f"{type(exc).__name__}: {text}"


async def run_row(
    agent: Agent,
    job: RowJob,
    schema: Any,
    *,
    retries: int = 1,
    timeout: float | None = None,
    backoff: float = 0.5,
    options: dict[str, Any] | None = None,
    on_stream: Callable[[RowJob, Any], None] | None = None,
) -> RowOutcome:
    """Run ``job`` to an outcome; never raises except for cancellation.

    ``on_stream(job, stream)`` is called with each attempt's Stream as it starts (the progress view watches rows
    through it).
    """
    out = RowOutcome(FAILED)
    started = time.monotonic()
    opts = _row_options(job, schema, timeout, options)
    try:
        while True:
            out.attempts += 1
            try:
                result = await _attempt(agent, job, opts, on_stream)
            except (RunError, TimeoutError) as exc:
                if isinstance(exc, RunError):
                    _account(out, exc.result)
                if out.attempts <= retries and is_transient(exc):
                    await asyncio.sleep(retry_delay(exc, out.attempts, backoff))
                    continue
                out.error = _error_text(exc)
                return out
            _account(out, result)
            return _decoded(out, result, schema)
    finally:
        out.duration_s = time.monotonic() - started


def _row_options(job: RowJob, schema: Any, timeout: float | None, options: dict[str, Any] | None) -> dict[str, Any]:
    """The options every attempt of the row sends: the batch's, its schema and timeout, its workspace."""
    opts: dict[str, Any] = dict(options or {})
    if schema is not None:
        opts["schema"] = schema
    if timeout is not None:
        opts["timeout"] = timeout
    if job.workspace_spec is not None:
        opts.update(row_options(job.workspace_spec, job.label, opts))
    return opts


async def _attempt(
    agent: Agent, job: RowJob, opts: dict[str, Any], on_stream: Callable[[RowJob, Any], None] | None
) -> Result:
    """One attempt: send the prompt (on the row's thread, if it has one) and wait for the Result."""
    sender = agent.thread(job.thread) if job.thread else agent
    stream = sender.send(job.prompt, **opts)
    if on_stream is not None:
        on_stream(job, stream)
    try:
        return await stream
    except asyncio.CancelledError:
        stream.cancel()
        raise


def _decoded(out: RowOutcome, result: Result, schema: Any) -> RowOutcome:
    """The row's values from a finished run: the schema's fields, or ``text`` without a schema."""
    from pydantic import ValidationError

    try:
        value = result.decode(schema) if schema is not None else None
    except (ValidationError, ValueError) as exc:
        out.error = f"output does not match the schema: {exc}"
        return out
    out.values = value.model_dump(mode="python") if value is not None else {"text": result.text}
    out.status = OK
    return out
