"""A cross-process lock on one repository's worktree bookkeeping (``flock`` on a file in the git directory)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

LOCK_NAME = "adaptor_nb-worktrees.lock"


@contextmanager
def repository_lock(git_common_dir: str) -> Iterator[None]:
    """Hold an exclusive lock for the repository whose common git directory is ``git_common_dir`` (blocking)."""
    fd = os.open(os.path.join(git_common_dir, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
