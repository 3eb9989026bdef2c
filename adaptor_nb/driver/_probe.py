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
    killed and reaped, then TimeoutError is raised. OSError means it could not be started. Output past
    ``_PROBE_OUTPUT_LIMIT`` bytes stops the child: a probe answers in a few lines, and a command that floods its
    output is not left to fill memory until the timeout.
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
        out = await asyncio.wait_for(_read_capped(proc), timeout)
    except BaseException:
        _kill_group(proc)
        with contextlib.suppress(Exception):
            await asyncio.shield(proc.wait())
        if proc.stdout is not None:  # read the killed child's pipe to its end, so its transport closes
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(proc.stdout.read()), 2.0)
        raise
    return out.decode("utf-8", "replace")


_PROBE_OUTPUT_LIMIT = 1 << 20


async def _read_capped(proc: asyncio.subprocess.Process) -> bytes:
    assert proc.stdout is not None
    chunks: list[bytes] = []
    size = 0
    while chunk := await proc.stdout.read(65536):
        chunks.append(chunk)
        size += len(chunk)
        if size > _PROBE_OUTPUT_LIMIT:
            _kill_group(proc)
            while await proc.stdout.read(65536):  # to EOF, so the pipe's transport closes
                pass
            break
    await proc.wait()
    return b"".join(chunks)[:_PROBE_OUTPUT_LIMIT]


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


__all__ = ["EnvironmentStatus", "capture_output"]
