"""A picklable Agent factory whose driver stalls one run, once, on whichever Dask worker runs it, and says where.

A prompt holding ``[stall]`` is the stalling one: the first run of it (across all processes: an exclusively created
marker file decides) writes its worker's address into a FIFO the test reads, then waits for ever, so the test can
kill that worker in the middle of the run. Every other run, and any later run of the same prompt, is the reference
driver's ordinary reply.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import Any

from adaptor_nb import Agent
from adaptor_nb.drivers import reference


def _first(marker: str) -> bool:
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def _announce(fifo: str, address: str) -> None:
    with open(fifo, "w") as pipe:  # blocks until the test opens the FIFO to read
        pipe.write(address + "\n")


class StallOnce(reference.Driver):
    """The reference driver, but the first ``[stall]`` run announces its worker and never finishes."""

    def __init__(self, fifo: str, marker: str, sessions: str) -> None:
        super().__init__(state_dir=sessions)
        self.fifo = fifo
        self.marker = marker

    async def run(self, invocation: Any, ctx: Any) -> Any:
        if "[stall]" in invocation.prompt and _first(self.marker):
            import distributed

            await asyncio.to_thread(_announce, self.fifo, distributed.get_worker().address)
            await asyncio.Event().wait()
        return await super().run(invocation, ctx)


@dataclass(frozen=True)
class StallingAgents:
    """Builds, on whichever process calls it, an Agent on ``StallOnce`` with no store of its own.

    The driver keeps its sessions in ``sessions`` (a directory all workers share), so a thread resumes its own
    session on any worker.
    """

    workspace: str
    fifo: str
    marker: str
    sessions: str

    def __call__(self) -> Agent:
        driver = StallOnce(self.fifo, self.marker, self.sessions)
        return Agent(driver, model="m", workspace=self.workspace)
