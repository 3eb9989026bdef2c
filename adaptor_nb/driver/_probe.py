"""What drivers share to probe their CLI: the report status and a bounded ``--version``-style capture."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from enum import Enum


class EnvironmentStatus(str, Enum):
    """The verdict of ``probe_environment()``; a str enum, so ``report.status == "ok"`` keeps working.

    OK: the CLI runs and has credentials. DEGRADED: found, but something is missing (version, credentials, config).
    MISSING: the CLI was not found. UNAVAILABLE: the driver cannot be used as configured (bad configuration).
    UNKNOWN: the probe could not tell.
    """

    OK = "ok"
    DEGRADED = "degraded"
    MISSING = "missing"
    UNAVAILABLE = "unavailable"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value


async def capture_output(
    argv: Sequence[str], env: Mapping[str, str] | None = None, *, timeout: float, stderr: bool = False
) -> str:
    """Run ``argv`` with stdin closed and return its stdout (and stderr if asked) as text.

    The child gets its own session; if it is not done within ``timeout`` seconds it and its process group are
    killed and reaped, then TimeoutError is raised. OSError means it could not be started.
    """
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT if stderr else asyncio.subprocess.DEVNULL,
        env=dict(env) if env is not None else None,
        start_new_session=True,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except BaseException:
        _kill_group(proc)
        with contextlib.suppress(Exception):
            await asyncio.shield(proc.wait())
        raise
    return out.decode("utf-8", "replace")


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


__all__ = ["EnvironmentStatus", "capture_output"]
