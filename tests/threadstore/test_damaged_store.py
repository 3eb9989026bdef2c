"""A damaged or unusable thread-store file: the run fails at once with a ThreadStoreError that names the store and the
path and says what to do, and the file is left as it was."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from adaptor_nb import Agent, AgentFailed, Done
from adaptor_nb.drivers import reference
from adaptor_nb.threadstore import SQLiteStore, ThreadStoreError


def random_bytes(path: Path) -> None:
    path.write_bytes(os.urandom(8192))


def truncated(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE filler (x TEXT)")
        conn.executemany("INSERT INTO filler VALUES (?)", [("x" * 500,) for _ in range(200)])
    data = path.read_bytes()
    path.write_bytes(data[:100])


def text_file(path: Path) -> None:
    path.write_text("these are my notes, not a database\n" * 100)


def directory(path: Path) -> None:
    path.mkdir()


async def run_once(path: Path, tmp_path: Path) -> Done:
    agent = Agent(reference.Driver(), model="m", workspace=str(tmp_path), thread_store=SQLiteStore(path))
    try:
        stream = agent.thread("work").send("hello")
        dones = [ev async for ev in stream.events() if isinstance(ev, Done)]
    finally:
        await agent.close()
    assert len(dones) == 1
    return dones[0]


@pytest.mark.parametrize("damage", [random_bytes, truncated, text_file], ids=["random", "truncated", "text"])
async def test_a_damaged_file_fails_with_a_store_error_and_is_left_untouched(
    tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    path = tmp_path / "threads.sqlite"
    damage(path)
    before = path.read_bytes()
    done = await run_once(path, tmp_path)
    err = done.err
    assert isinstance(err, ThreadStoreError) and not isinstance(err, AgentFailed)
    assert str(path) in str(err) and "SQLiteStore" in str(err)
    assert "move it away" in str(err)
    assert err.details["path"] == str(path)
    assert path.read_bytes() == before


async def test_a_directory_in_place_of_the_file_says_so(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    directory(path)
    done = await run_once(path, tmp_path)
    assert isinstance(done.err, ThreadStoreError)
    assert str(path) in str(done.err) and "is a directory" in str(done.err)


async def test_a_file_in_a_read_only_place_says_to_fix_permissions(tmp_path: Path) -> None:
    # A parent that is a plain file cannot be a directory for anyone, root included.
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    path = blocker / "threads.sqlite"
    done = await run_once(path, tmp_path)
    assert isinstance(done.err, ThreadStoreError)
    assert str(path) in str(done.err)
