"""Batch progress: live counts for listeners, a terminal status line, a static summary."""

from __future__ import annotations

import io

import pandas as pd

from adaptor_nb import Agent
from adaptor_nb.batch import Progress, map_rows
from adaptor_nb.batch._progress import TerminalLine

from ._rows import RowDriver, Ticket


async def test_listeners_see_every_row_finish_and_the_summary_counts_them() -> None:
    df = pd.DataFrame({"body": ["a", "[fail:nope]", "c"]})
    seen: list[tuple[int, int, int]] = []
    batch = map_rows(Agent(RowDriver()), df, "{body}", Ticket, concurrency=2, progress=False)
    batch.progress.listeners.append(lambda p: seen.append((p.finished, p.running, p.queued)))
    await batch
    p = batch.progress
    assert (p.done, p.failed, p.running, p.queued) == (2, 1, 0, 0)
    assert seen[-1] == (3, 0, 0)
    assert max(r for _, r, _ in seen) == 2
    assert p.failures == [(1, "agent_error: nope")]
    assert "3/3 rows: 2 ok, 0 cached, 1 failed" in batch._repr_html_()


def test_the_terminal_line_ends_with_the_final_counts() -> None:
    buf = io.StringIO()
    p = Progress(total=2, listeners=[TerminalLine(buf, interval=3600)])
    p.admit()
    p.admit()
    from adaptor_nb.batch import RowOutcome

    p.finish("a", RowOutcome("ok"), was_running=True)
    p.finish("b", RowOutcome("failed", error="x"), was_running=True)
    text = buf.getvalue()
    assert text.endswith("\n")
    assert "[########################] 2/2 rows: 1 ok, 0 cached, 1 failed" in text.splitlines()[-1]
