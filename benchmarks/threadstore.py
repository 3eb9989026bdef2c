"""Thread store throughput: finalize and lease operations per second, SQLite next to the in-memory baseline.

Run: ``.venv/bin/python benchmarks/threadstore.py [--seconds 1.5]``. Prints one table; the memory store is the
baseline every SQLite figure is compared with in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import sqlite3
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from adaptor_nb.driver import Checkpoint
from adaptor_nb.threadstore import FinalizeRequest, HistoryEntry, MemoryStore, SQLiteStore, Store

Op = Callable[[int], Awaitable[object]]


def typical_request(i: int) -> FinalizeRequest:
    """What a healthy run saves: a new checkpoint, two message receipts, one history entry, usage."""
    now = time.time()
    return FinalizeRequest(
        driver="reference",
        fingerprint="fp",
        checkpoint=Checkpoint(session_id=f"s{i}", driver="reference", fingerprint="fp", run_id=f"r{i}"),
        receipts={f"m{i}-a": now, f"m{i}-b": now},
        history=(HistoryEntry("assistant", f"answer {i} " + "x" * 400, now),),
        status="ok",
        run_id=f"r{i}",
        usage={"input_tokens": 100, "output_tokens": 20},
    )


async def measure(op: Op, seconds: float) -> tuple[float, int]:
    """Operations per second of ``op`` over about ``seconds`` (after a short warm-up)."""
    for i in range(20):
        await op(-i - 1)
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(50):
            await op(n)
            n += 1
    return n / (time.perf_counter() - start), n


async def scenarios(store: Store) -> dict[str, Op]:
    lease = await store.acquire_lease("bench", "owner", 3600)
    full = await store.acquire_lease("full", "owner", 3600)
    now = time.time()
    await store.finalize(full, FinalizeRequest(receipts={f"old-{j}": now - 1000 + j for j in range(1000)}))

    async def finalize(i: int) -> object:
        return await store.finalize(lease, typical_request(i))

    async def finalize_full(i: int) -> object:
        return await store.finalize(full, typical_request(i))

    async def lease_cycle(i: int) -> object:
        held = await store.acquire_lease(f"cycle-{i % 64}", "owner", 60)
        held = await store.renew_lease(held, 60)
        await store.release_lease(held)
        return held

    async def resolve(i: int) -> object:
        return await store.resolve("bench")

    async def concurrent_finalize(i: int) -> object:
        return await asyncio.gather(*(store.finalize(lease, typical_request(i)) for _ in range(8)))

    return {
        "finalize (typical run)": finalize,
        "finalize, 1000 receipts on record": finalize_full,
        "lease acquire+renew+release": lease_cycle,
        "resolve": resolve,
        "8 concurrent finalizes (per batch)": concurrent_finalize,
    }


async def run(seconds: float) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="adaptor_nb-bench-"))
    stores: dict[str, Callable[[], Store]] = {
        "memory (baseline)": MemoryStore,
        "sqlite NORMAL": lambda: SQLiteStore(tmp / "normal.sqlite"),
        "sqlite FULL": lambda: SQLiteStore(tmp / "full.sqlite", synchronous="FULL"),
    }
    results: dict[str, dict[str, float]] = {}
    for name, make in stores.items():
        store = make()
        try:
            for scenario, op in (await scenarios(store)).items():
                rate, _ = await measure(op, seconds)
                results.setdefault(scenario, {})[name] = rate
        finally:
            if isinstance(store, SQLiteStore):
                store.close()

    print(f"python {platform.python_version()}, sqlite {sqlite3.sqlite_version}, {platform.machine()}")
    print(f"database in {tmp} ({seconds:.1f}s per figure); operations per second, higher is better\n")
    names = list(stores)
    header = f"{'operation':<36}" + "".join(f"{n:>20}" for n in names) + f"{'sqlite/memory':>16}"
    print(header)
    print("-" * len(header))
    for scenario, row in results.items():
        ratio = row["sqlite NORMAL"] / row["memory (baseline)"]
        cells = "".join(f"{row[n]:>20,.0f}" for n in names)
        print(f"{scenario:<36}{cells}{ratio:>15.3f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=1.5, help="measuring time per figure")
    args = parser.parse_args()
    asyncio.run(run(args.seconds))


if __name__ == "__main__":
    main()
