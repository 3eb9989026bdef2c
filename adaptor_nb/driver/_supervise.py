"""Starting a CLI under its supervisor (``_supervisor``): the argv that does it, and the CLI's pid it reports.

Linux only: the supervisor needs ``prctl(PR_SET_CHILD_SUBREAPER)`` and /proc. Elsewhere, or with
``ADAPTOR_NB_SUPERVISOR=0`` in the environment, a CLI is started as it is; descendants are then found while they
are still below the CLI or hold one of its pipes (see ``_process``), and a daemon that left both cannot be found.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

SCRIPT = str(Path(__file__).with_name("_supervisor.py"))
REPORT_TIMEOUT = 30.0  # the supervisor reports within milliseconds; this bounds a machine that is stalled


def available() -> bool:
    return (
        sys.platform.startswith("linux")
        and os.environ.get("ADAPTOR_NB_SUPERVISOR", "1") != "0"
        and bool(sys.executable)
        and os.access(sys.executable, os.X_OK)
    )


class Supervised:
    """The supervisor's argv for one CLI, and the pipe on which it reports the CLI's pid."""

    def __init__(self, argv: list[str], grace: float) -> None:
        self._read, self._write = os.pipe()
        self.pass_fds = (self._write,)
        self.argv = [sys.executable, "-I", "-S", SCRIPT, str(self._write), f"{grace:g}", "--", *argv]

    def close(self) -> None:
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)

    async def pid(self, name: str) -> int:
        """The CLI's pid, once the supervisor started it; OSError (as starting it directly would raise) when it
        could not be started; 0 when the supervisor ended without saying."""
        with contextlib.suppress(OSError):
            os.close(self._write)
        loop = asyncio.get_running_loop()
        got: asyncio.Future[None] = loop.create_future()
        data = bytearray()

        def readable() -> None:
            try:
                chunk = os.read(self._read, 64)
            except OSError:
                chunk = b""
            data.extend(chunk)
            if (not chunk or b"\n" in data) and not got.done():
                got.set_result(None)

        loop.add_reader(self._read, readable)
        try:
            await asyncio.wait_for(got, REPORT_TIMEOUT)
        finally:
            loop.remove_reader(self._read)
            with contextlib.suppress(OSError):
                os.close(self._read)
        line = bytes(data).split(b"\n", 1)[0]
        if line.startswith(b"E") and line[1:].isdigit():
            code = int(line[1:])
            raise OSError(code, os.strerror(code), name)
        return int(line[1:]) if line.startswith(b"P") and line[1:].isdigit() else 0


def supervised(argv: list[str], grace: float) -> Supervised | None:
    """How to start ``argv`` under a supervisor, or None where there is none."""
    return Supervised(argv, grace) if available() else None
