"""The error a thread store raises when its file cannot be used, naming the store, the path and what to do."""

from __future__ import annotations

from pathlib import Path

from .._errors import ThreadError

_DAMAGED = ("not a database", "malformed", "corrupt")
_ACCESS = ("readonly", "read-only", "unable to open", "permission", "access")


class ThreadStoreError(ThreadError):
    """A thread store's file is damaged, missing or unwritable; ``details`` has ``store``, ``path``, ``cause``."""


def store_error(store: str, path: Path, exc: BaseException) -> ThreadStoreError:
    """``exc`` (raised while using the store's file) as a ThreadStoreError that says what to do about it."""
    text = str(exc)
    low = text.lower()
    if isinstance(exc, IsADirectoryError) or path.is_dir():
        advice = "the path is a directory: pass the path of a file (it is created if missing)"
    elif any(word in low for word in _DAMAGED):
        advice = (
            "the file is damaged or is not a thread store: move it away (a new store is created at the path) "
            "or pass another path; the file itself was left untouched"
        )
    elif isinstance(exc, PermissionError) or any(word in low for word in _ACCESS):
        advice = "the file or its directory cannot be written: fix its permissions (or attributes) or pass another path"
    else:
        advice = "check the file and its directory, or pass another path"
    return ThreadStoreError(
        f"thread store {store} at {str(path)!r} cannot be used: {type(exc).__name__}: {text}; {advice}",
        details={"store": store, "path": str(path), "cause": f"{type(exc).__name__}: {text}"},
    )
