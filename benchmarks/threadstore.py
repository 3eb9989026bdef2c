"""Thread store throughput: SQLite and PostgreSQL next to the in-memory baseline, and how both scale.

Run: ``.venv/bin/python benchmarks/threadstore.py [--seconds 1.5] [--sizes 10,1000,10000] [--dsn DSN]``. Prints
three tables from one run: operations per second of every store (the memory store is the baseline); resolve,
checkpoint and ``list()`` with 10, 1,000 and 10,000 threads on record (SQLite is the baseline for PostgreSQL); and
16 concurrent writers on one thread, counting lost updates. Without ``--dsn`` a throwaway PostgreSQL server is
started on loopback from Debian's binaries (as the tests do) and removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from adaptor_nb._errors import ThreadBusyError
from adaptor_nb.driver import Checkpoint
from adaptor_nb.threadstore import FinalizeRequest, HistoryEntry, MemoryStore, PostgresStore, SQLiteStore, Store

ROOT = Path(__file__).resolve().parents[1]
WRITERS = 16
WRITES_EACH = 25

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


async def close(store: Store) -> None:
    if isinstance(store, SQLiteStore):
        store.close()
    elif isinstance(store, PostgresStore):
        await store.aclose()


async def throughput(stores: dict[str, Callable[[], Store]], seconds: float) -> None:
    results: dict[str, dict[str, float]] = {}
    for name, make in stores.items():
        store = make()
        try:
            for scenario, op in (await scenarios(store)).items():
                rate, _ = await measure(op, seconds)
                results.setdefault(scenario, {})[name] = rate
        finally:
            await close(store)
    names = list(stores)
    header = f"{'operation':<36}" + "".join(f"{n:>18}" for n in names) + f"{'sqlite/mem':>12}{'pg off/sqlite':>15}"
    print(header)
    print("-" * len(header))
    for scenario, row in results.items():
        cells = "".join(f"{row[n]:>18,.0f}" for n in names)
        mem = row["sqlite NORMAL"] / row["memory (baseline)"]
        pg = row["postgres sync off"] / row["sqlite NORMAL"]
        print(f"{scenario:<36}{cells}{mem:>11.3f}x{pg:>14.2f}x")


async def fill(store: Store, count: int) -> list[str]:
    keys = [f"t{i:06d}" for i in range(count)]

    async def write(key: str) -> None:
        lease = await store.acquire_lease(key, "filler", 60)
        await store.finalize(lease, typical_request(0))
        await store.release_lease(lease)

    for start in range(0, count, 32):
        await asyncio.gather(*(write(k) for k in keys[start : start + 32]))
    return keys


SCALED = ("sqlite NORMAL", "sqlite FULL", "postgres", "postgres sync off")
FLOORS = ("round trip", "commit", "commit, sync off")


class Floors:
    """What the server and its driver cost before any store code: a round trip (``SELECT 1`` on a held psycopg
    connection) and a one-row upsert committed, with synchronous_commit on and off."""

    async def open(self, dsn: str) -> None:
        import psycopg

        self.on = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
        self.off = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
        await self.on.execute("CREATE TABLE IF NOT EXISTS bench_floor (k TEXT PRIMARY KEY, v TEXT NOT NULL)")
        await self.off.execute("SET synchronous_commit = off")

    async def close(self) -> None:
        await self.on.close()
        await self.off.close()

    def ops(self) -> dict[str, Callable[[], Awaitable[object]]]:
        upsert = "INSERT INTO bench_floor VALUES (%s, %s) ON CONFLICT (k) DO UPDATE SET v = excluded.v"

        async def trip() -> object:
            return await (await self.on.execute("SELECT 1")).fetchone()

        async def commit() -> object:
            return await self.on.execute(upsert, ("on", "x" * 400))

        async def commit_off() -> object:
            return await self.off.execute(upsert, ("off", "x" * 400))

        return dict(zip(FLOORS, (trip, commit, commit_off), strict=True))


async def scale_rows(stores: dict[str, Store], floors: Floors, count: int) -> dict[str, dict[str, float]]:
    """Resolve, checkpoint and list() on every store, taken in turns (one call on each store per round, the floors
    measured in the same rounds), so a slow moment of the machine falls on all of them alike."""
    filled = [await fill(store, count) for store in stores.values()]
    keys = filled[0]  # the same keys in every store
    pick = random.Random(count)
    times: dict[tuple[str, str], list[float]] = {}

    async def clock(name: str, what: str, op: Callable[[], Awaitable[object]]) -> None:
        start = time.perf_counter()
        await op()
        times.setdefault((name, what), []).append((time.perf_counter() - start) * 1000)

    def resolve(store: Store, key: str) -> Callable[[], Awaitable[object]]:
        return lambda: store.resolve(key)

    def checkpoint(store: Store, key: str) -> Callable[[], Awaitable[object]]:
        async def op() -> object:
            lease = await store.acquire_lease(key, "bench", 60)
            saved = await store.finalize(lease, typical_request(1))
            await store.release_lease(lease)
            return saved

        return op

    floor_ops = floors.ops()
    for _ in range(200):
        key = pick.choice(keys)
        for name, store in stores.items():
            await clock(name, "resolve", resolve(store, key))
        await clock("floor", "round trip", floor_ops["round trip"])
    for _ in range(200):
        key = pick.choice(keys)
        for name, store in stores.items():
            await clock(name, "checkpoint", checkpoint(store, key))
        await clock("floor", "commit", floor_ops["commit"])
        await clock("floor", "commit, sync off", floor_ops["commit, sync off"])
    for _ in range(3 if count > 1000 else 9):
        for name, store in stores.items():
            await clock(name, "list", store.list)
    med = {k: statistics.median(v) for k, v in times.items()}
    out = {name: {what: med[(name, what)] for what in ("resolve", "checkpoint", "list")} for name in stores}
    for row in out.values():
        row["list/record"] = row["list"] * 1000 / count
    out["floor"] = {what: med[("floor", what)] for what in FLOORS}
    return out


async def scale(stores: dict[str, Callable[[], Store]], sizes: list[int], dsn: str) -> None:
    print(f"\n{'threads':>8}{'store':>18}{'resolve ms':>12}{'checkpoint ms':>15}{'list() ms':>12}{'µs/record':>11}")
    floors = Floors()
    await floors.open(dsn)
    try:
        for count in sizes:
            opened = {name: stores[name]() for name in SCALED}
            try:
                rows = await scale_rows(opened, floors, count)
            finally:
                for store in opened.values():
                    await close(store)
            for name in SCALED:
                row = rows[name]
                print(
                    f"{count:>8,}{name:>18}{row['resolve']:>12.2f}{row['checkpoint']:>15.2f}{row['list']:>12.1f}"
                    f"{row['list/record']:>11.1f}"
                )
            # Against SQLite's default (NORMAL), and like for like: both stores waiting for the disk at commit.
            for name, base_name, label in (
                ("postgres", "sqlite NORMAL", "postgres/sqlite"),
                ("postgres sync off", "sqlite NORMAL", "postgres sync off/sqlite"),
                ("postgres", "sqlite FULL", "postgres/sqlite FULL"),
            ):
                base = rows[base_name]
                ratios = "  ".join(f"{k} {rows[name][k] / base[k]:.2f}x" for k in ("resolve", "checkpoint", "list"))
                print(f"{'':>8}{label:>30}  {ratios}")
            floor = rows["floor"]
            print(
                f"{'':>8}{'postgres floors':>30}  round trip {floor['round trip']:.3f} ms, one-row commit "
                f"{floor['commit']:.3f} ms (sync off {floor['commit, sync off']:.3f} ms)"
            )
    finally:
        await floors.close()
    print(
        "\na resolve is 1 round trip. A checkpoint (acquire, finalize, release) is 4 round trips: the lease's two"
        "\ncommits do not wait for the disk, the save's one does (unless synchronous_commit is off), so its floor is"
        "\nabout a one-row commit and three round trips (two one-row commits with sync off and a round trip)."
    )


async def writers(make: Callable[[], Store]) -> tuple[float, int, int]:
    """16 writers, each with a store of its own, each saving 25 times on one thread; (seconds, lost, retries)."""
    made = [make() for _ in range(WRITERS)]
    busy = 0

    async def writer(w: int, store: Store) -> None:
        nonlocal busy
        for i in range(WRITES_EACH):
            while True:
                try:
                    lease = await store.acquire_lease("contended", f"writer-{w}", 60)
                    break
                except ThreadBusyError:
                    busy += 1
                    await asyncio.sleep(0.001)
            await store.finalize(lease, FinalizeRequest(receipts={f"w{w}-{i}": time.time()}, status=f"w{w}"))
            await store.release_lease(lease)

    try:
        start = time.perf_counter()
        await asyncio.gather(*(writer(w, s) for w, s in enumerate(made)))
        elapsed = time.perf_counter() - start
        record = await made[0].resolve("contended")
        assert record is not None
        lost = WRITERS * WRITES_EACH - len(record.receipts) + (WRITERS * WRITES_EACH - record.runs)
        return elapsed, lost, busy
    finally:
        for s in made:
            await close(s)


async def run(seconds: float, sizes: list[int], dsn: str) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="adaptor_nb-bench-"))
    cluster: Any = None
    if not dsn:
        sys.path.insert(0, str(ROOT / "tests" / "threadstore"))
        from pg_cluster import Cluster

        cluster = Cluster()
        cluster.start()
        dsn = cluster.dsn()
    try:
        stores: dict[str, Callable[[], Store]] = {
            "memory (baseline)": MemoryStore,
            "sqlite NORMAL": lambda: SQLiteStore(tmp / f"{uuid.uuid4().hex}.sqlite"),
            "sqlite FULL": lambda: SQLiteStore(tmp / f"{uuid.uuid4().hex}.sqlite", synchronous="FULL"),
            "postgres": lambda: PostgresStore(dsn, schema=f"bench_{uuid.uuid4().hex}"),
            "postgres sync off": lambda: PostgresStore(
                dsn, schema=f"bench_{uuid.uuid4().hex}", synchronous_commit="off"
            ),
        }
        probe = PostgresStore(dsn, schema="bench_probe")
        print(f"python {platform.python_version()}, sqlite {sqlite3.sqlite_version}, {platform.machine()}")
        print(f"sqlite files in {tmp}; postgres at {probe.dsn} ({seconds:.1f}s per figure)\n")
        print("operations per second, higher is better")
        await throughput(stores, seconds)
        await scale(stores, sizes, dsn)
        print(f"\n{WRITERS} concurrent writers x {WRITES_EACH} saves on one thread (each writer its own store object)")
        shared_file, shared_schema = tmp / "contended.sqlite", f"bench_{uuid.uuid4().hex}"
        shared: dict[str, Callable[[], Store]] = {
            "sqlite NORMAL": lambda: SQLiteStore(shared_file),
            "postgres": lambda: PostgresStore(dsn, schema=shared_schema, pool_size=1),
            "postgres sync off": lambda: PostgresStore(
                dsn, schema=shared_schema + "_off", pool_size=1, synchronous_commit="off"
            ),
        }
        for name, make in shared.items():
            elapsed, lost, busy = await writers(make)
            total = WRITERS * WRITES_EACH
            print(f"{name:>16}: {total / elapsed:>8,.0f} saves/s, lost updates {lost}, busy retries {busy}")
    finally:
        if cluster is not None:
            cluster.remove()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=1.5, help="measuring time per figure")
    parser.add_argument("--sizes", default="10,1000,10000", help="thread counts for the scaling table")
    parser.add_argument("--dsn", default="", help="a PostgreSQL server to use (default: a throwaway one)")
    args = parser.parse_args()
    asyncio.run(run(args.seconds, [int(s) for s in args.sizes.split(",")], args.dsn))


if __name__ == "__main__":
    main()
