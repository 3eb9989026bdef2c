"""A separate OS process on a Postgres thread store; the Postgres process tests drive it over stdin/stdout.

Usage: python pg_worker.py MODE DSN SCHEMA [ARGS...]; every report is one JSON line on stdout.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from adaptor_nb.driver import Checkpoint
from adaptor_nb.threadstore import FinalizeRequest, PostgresStore
from adaptor_nb.threadstore._pg_schema import SCHEMA_VERSION


def report(**fields: Any) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


async def migrate(store: PostgresStore) -> None:
    """Wait for the parent's go, then open the store (creating its schema) and say which version it found."""
    report(event="ready")
    sys.stdin.readline()
    record = await store.resolve("nothing")
    report(event="done", record=record is not None, version=SCHEMA_VERSION)


async def hold(store: PostgresStore, key: str, owner: str, ttl: float) -> None:
    """Take the lease, save a healthy checkpoint, report the lease, then block (mid-run) until killed."""
    lease = await store.acquire_lease(key, owner, ttl)
    cp = Checkpoint(session_id=f"session-of-{owner}", driver="reference", fingerprint="fp", run_id="r1")
    await store.finalize(lease, FinalizeRequest(driver="reference", fingerprint="fp", checkpoint=cp, status="ok"))
    lease = await store.renew_lease(lease, ttl)
    report(event="held", token=lease.token, expires_at=lease.expires_at)
    await asyncio.to_thread(sys.stdin.readline)


async def main() -> None:
    mode, dsn, schema, *args = sys.argv[1:]
    store = PostgresStore(dsn, schema=schema)
    try:
        if mode == "migrate":
            await migrate(store)
        elif mode == "hold":
            await hold(store, args[0], args[1], float(args[2]))
        else:
            raise SystemExit(f"unknown mode {mode!r}")
    finally:
        await store.aclose()


if __name__ == "__main__":
    asyncio.run(main())
