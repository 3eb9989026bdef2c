"""Which failures are worth another attempt, and how long to wait before it."""

from __future__ import annotations

import re

from .._errors import LimitExceeded, RunError

_TRANSIENT = re.compile(
    r"rate.?limit|overloaded|too many requests|\b429\b|\b5\d\d\b|server error|connection|network|timed? ?out|timeout",
    re.IGNORECASE,
)
MAX_BACKOFF_S = 30.0


def is_transient(exc: BaseException) -> bool:
    """Rate limits, network trouble, provider 5xx and timeouts; never schema or policy failures."""
    if isinstance(exc, TimeoutError):
        return True
    if not isinstance(exc, RunError):
        return False
    if exc.details.get("retryable"):
        return True
    if isinstance(exc, LimitExceeded):
        return "time" in exc.message.lower()
    return bool(_TRANSIENT.search(exc.message))


def retry_delay(exc: BaseException, attempt: int, base: float) -> float:
    """The provider's retry-after hint when it gave one, else exponential backoff from ``base``."""
    hint = exc.details.get("retry_after") if isinstance(exc, RunError) else None
    if isinstance(hint, int | float) and hint >= 0:
        return min(float(hint), MAX_BACKOFF_S)
    return float(min(base * (2.0 ** (attempt - 1)), MAX_BACKOFF_S))
