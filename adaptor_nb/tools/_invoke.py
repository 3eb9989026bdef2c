"""One tool call: validate the arguments, run the function (sync in a worker thread, async on the loop) within
its timeout, and turn every outcome into what the model may see. Only rejections and validation messages carry
the tool's own words; any other failure reaches the model as the tool's name and the error type, and the host's
notice as one sanitized line."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
from dataclasses import dataclass
from typing import Any

from ._define import Tool
from ._errors import as_rejection

__all__ = ["CallOutcome", "call_tool", "sanitize"]

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASS|AUTH|CRED|COOKIE|SESSION", re.IGNORECASE)
_MAX_LINE = 200


@dataclass(frozen=True)
class CallOutcome:
    """What goes back to the model, and what the host should hear about (a Notice) when it went wrong."""

    text: str
    is_error: bool = False
    structured: Any = None
    kind: str = "ok"  # ok | rejected | invalid_args | failed | timeout | bad_result | cancelled
    notice: str = ""


def sanitize(text: str, extra_secrets: tuple[str, ...] = ()) -> str:
    """One short line with secret-looking environment values (and ``extra_secrets``) masked."""
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    secrets = [v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 6]
    secrets += [s for s in extra_secrets if len(s) >= 4]
    for value in sorted(set(secrets), key=len, reverse=True):
        line = line.replace(value, "<hidden>")
    if len(line) > _MAX_LINE:
        line = line[: _MAX_LINE - 1] + "…"
    return line


def _failure(t: Tool, kind: str, what: str) -> CallOutcome:
    text = f"tool {t.name!r} failed: {what}"
    return CallOutcome(text=text, is_error=True, kind=kind, notice=text)


async def call_tool(t: Tool, arguments: Any) -> CallOutcome:
    """Run ``t`` for the model. Raises only CancelledError (the run or the Agent was cancelled)."""
    try:
        kwargs = t.validate_args(arguments if arguments is not None else {})
    except ValueError as exc:
        return CallOutcome(text=sanitize(str(exc)), is_error=True, kind="invalid_args")
    limit = asyncio.timeout(t.timeout)
    try:
        async with limit:
            if t.is_async:
                value = await t.fn(**kwargs)
            else:
                value = await asyncio.get_running_loop().run_in_executor(None, functools.partial(t.fn, **kwargs))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        if isinstance(exc, TimeoutError) and limit.expired() and t.timeout is not None:
            return _failure(t, "timeout", f"timed out after {t.timeout:g} s")
        rejection = as_rejection(exc)
        if rejection is not None:
            return CallOutcome(text=rejection.message, is_error=True, kind="rejected")
        # The model reads only the tool's name and the error type (its message may hold anything: a token, a
        # path); the host's notice carries the message too, sanitized.
        return CallOutcome(
            text=f"tool {t.name!r} failed: {type(exc).__name__}",
            is_error=True,
            kind="failed",
            notice=f"tool {t.name!r} failed: " + (sanitize(f"{type(exc).__name__}: {exc}") or type(exc).__name__),
        )
    try:
        dumped = t.dump_result(value)
        text = dumped if isinstance(dumped, str) else json.dumps(dumped, ensure_ascii=False)
    except (ValueError, TypeError) as exc:
        return _failure(t, "bad_result", sanitize(str(exc)) or "its return value cannot be serialised")
    except Exception as exc:
        return _failure(t, "bad_result", f"its return value cannot be serialised ({type(exc).__name__})")
    structured = dumped if isinstance(dumped, dict) else None
    return CallOutcome(text=text, structured=structured)
