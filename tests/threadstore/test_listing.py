"""list() loads records a page at a time: across page boundaries it returns exactly what resolve() does."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from adaptor_nb.driver import Checkpoint
from adaptor_nb.threadstore import FinalizeRequest, HistoryEntry, PostgresStore, SQLiteStore, Store

COUNT = 1100  # more than two pages of 500


async def fill(store: Store) -> list[str]:
    keys = [f"thread-{i:05d}" for i in range(COUNT)]

    async def write(i: int, key: str) -> None:
        lease = await store.acquire_lease(key, "owner", 60)
        for turn in range(2 if i % 7 == 0 else 1):  # some threads with an archived checkpoint
            cp = Checkpoint(session_id=f"s{i}-{turn}", driver="d", fingerprint="f", run_id=f"r{turn}", data={"i": i})
            request = FinalizeRequest(
                checkpoint=cp,
                archive_previous=True,
                receipts={f"m{i}-{turn}": time.time()} if i % 3 else {},
                history=(HistoryEntry("assistant", f"answer {i}", 1.0),) if i % 2 else (),
                status="ok",
            )
            await store.finalize(lease, request)
        await store.release_lease(lease)

    for start in range(0, COUNT, 50):
        await asyncio.gather(*(write(i, keys[i]) for i in range(start, min(start + 50, COUNT))))
    return keys


async def same_as_resolve(store: Store) -> None:
    keys = await fill(store)
    listed = await store.list()
    assert sorted(r.key for r in listed) == keys
    assert [r.updated_at for r in listed] == sorted((r.updated_at for r in listed), reverse=True)
    for record in listed[:: COUNT // 60]:
        assert record == await store.resolve(record.key)
    assert listed[-1] == await store.resolve(listed[-1].key)


async def test_sqlite_list_pages_match_resolve(sqlite_factory: Callable[[], SQLiteStore]) -> None:
    await same_as_resolve(sqlite_factory())


async def test_postgres_list_pages_match_resolve(pg_factory: Callable[..., PostgresStore]) -> None:
    store = pg_factory()
    try:
        await same_as_resolve(store)
    finally:
        await store.aclose()
