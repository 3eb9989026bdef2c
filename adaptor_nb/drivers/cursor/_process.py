"""One Cursor Agent process per turn: spawned with the prompt on stdin, read line by line, always reaped."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from ...driver import CLIProcess, InvalidDriverConfigError, ProcessInfo, ProcessKind
from ._command import Launch
from ._config import INSTALL_HINT


class CursorProcess:
    """The CLI for one turn. ``frames()`` yields each stdout line decoded (or the raw bytes when it is not JSON)."""

    def __init__(self, cli: CLIProcess, launch: Launch) -> None:
        self.cli = cli
        self.launch = launch

    @classmethod
    async def start(
        cls, launch: Launch, on_stderr: Callable[[bytes], None], max_line: int | None = None
    ) -> CursorProcess:
        try:
            cli = await CLIProcess.start(
                launch.argv, cwd=launch.cwd, env=launch.env, on_stderr=on_stderr, max_line=max_line
            )
        except OSError as exc:
            raise InvalidDriverConfigError(
                f"cursor: could not start {launch.argv[0]!r}: {exc}. {INSTALL_HINT}", option="command"
            ) from None
        proc = cls(cli, launch)
        try:
            await cli.write(launch.stdin)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the CLI is already gone: its exit status and stderr tell why
        cli.close_stdin()
        return proc

    @property
    def pid(self) -> int:
        return self.cli.pid

    def spawn_event(self) -> ProcessInfo:
        argv = self.launch.argv
        return ProcessInfo(
            kind=ProcessKind.SPAWN,
            text=" ".join(argv),
            data={"pid": self.cli.pid, "argv": list(argv), "cwd": self.launch.cwd, "resume": self.launch.resume},
        )

    async def frames(self, raw: Callable[[bytes], None]) -> AsyncIterator[dict[str, Any] | bytes]:
        async for line in self.cli.lines():
            raw(line + b"\n")
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested too deeply to decode
                yield line
                continue
            yield obj if isinstance(obj, dict) else line

    async def finish(self, grace: float) -> int | None:
        """Wait for the exit (bounded by ``grace``, then the group is killed) and the last stderr bytes."""
        rc = await self.cli.close(grace)
        await self.cli.wait_stderr()
        return rc

    def stderr_tail(self) -> str:
        return self.cli.stderr_tail()


async def reap(proc: CursorProcess, grace: float) -> int | None:
    """Close ``proc`` even while the calling task is being cancelled; the cancellation is re-raised after."""
    task = asyncio.get_running_loop().create_task(proc.finish(grace))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
        raise
