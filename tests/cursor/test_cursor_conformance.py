"""The public driver conformance suite on the Cursor driver, with the replay stand-in answering each prompt."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator

from conformance_table import check_column

from adaptor_nb.drivers import cursor
from adaptor_nb.testing import ConformanceCase, cursor_replay_command, run_driver_conformance
from adaptor_nb.testing.conformance import HOST_TOOL_PREFIX


@contextlib.contextmanager
def _gate_keeper(fifo: str, case: ConformanceCase) -> Iterator[None]:
    """Opens the gate FIFO for each held run (the replay waits at it) and closes it once the hold is released."""
    stop = threading.Event()

    def keep() -> None:
        while not stop.is_set():
            with open(fifo, "wb"):
                if stop.is_set():
                    return
                case.hold.wait(60)

    thread = threading.Thread(target=keep, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # lets a keeper blocked on open go on and see the stop
        thread.join(5)
        os.close(fd)


def _runs(case: ConformanceCase, pick: str) -> str:
    indices = [str(i + 1) for i, r in enumerate(case.runs) if getattr(r, pick)]
    return rf"run ({'|'.join(indices)})\." if indices else r"(?!)"


def _host_options(case: ConformanceCase) -> list[str]:
    """The replay options that make the run with ``host_calls`` call those tools in one step and answer its reply only
    when the results carry every ``host_expect`` text (the host-tool checks have one such run)."""
    picked = [(i, r) for i, r in enumerate(case.runs) if r.host_calls]
    if not picked:
        return []
    index, run = picked[0]
    options = ["--replay-call-host-when", rf"run {index + 1}\."]
    for name, args in run.host_calls:
        assert not name.startswith(HOST_TOOL_PREFIX), name
        options += ["--replay-call-host", f"{name}={json.dumps(args)}"]
    for text in run.host_expect:
        options += ["--replay-expect-result", text]
    return options


def make_factory():
    @contextlib.asynccontextmanager
    async def factory(case: ConformanceCase) -> AsyncIterator[cursor.Driver]:
        with tempfile.TemporaryDirectory(prefix="cursor-conf-") as tmp:
            fifo = os.path.join(tmp, "gate")
            os.mkfifo(fifo)
            options = ["--replay-gate", f"3={fifo}", "--replay-gate-when", _runs(case, "hold")]
            options += ["--replay-fail-when", _runs(case, "fail")]
            options += _host_options(case)
            cfg = cursor.Config(
                command=cursor_replay_command("@answer", *options),
                cwd=case.workspace or None,
                secret_env={"CURSOR_API_KEY": "cursor-conformance-key"},
                grace_period=1.0,
            )
            with _gate_keeper(fifo, case):
                yield cursor.Driver(cfg)

    return factory


async def test_the_cursor_driver_passes_the_conformance_suite() -> None:
    report = await run_driver_conformance(make_factory(), timeout=60, raise_on_failure=False)
    print(report)
    assert report.ok, str(report)
    wanted = {"event_ordering", "messages_soon", "messages_after_turn", "checkpoints", "cancellation"}
    wanted |= {"host_tool_calls", "host_tool_errors", "host_tool_cancel"}
    assert wanted <= set(report.passed)
    check_column(report, "cursor")  # the committed clause table matches this run
