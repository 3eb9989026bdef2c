"""The PostgreSQL store's tables, created and migrated forward in one transaction under an advisory lock."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ._errors import ThreadStoreError

if TYPE_CHECKING:
    from psycopg import AsyncConnection

# Each migration is (version, name, statements); "{s}" stands for the quoted schema. Versions only ever grow, and a
# released one never changes.
Migration = tuple[int, str, tuple[str, ...]]
MIGRATIONS: tuple[Migration, ...] = (
    (
        1,
        "threads, checkpoints, receipts, continuity history and leases",
        (
            """CREATE TABLE {s}.threads (
                key TEXT PRIMARY KEY,
                driver TEXT NOT NULL,
                fingerprint TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                updated_at DOUBLE PRECISION NOT NULL,
                runs BIGINT NOT NULL,
                last_status TEXT NOT NULL,
                last_run_id TEXT NOT NULL,
                usage TEXT NOT NULL,
                metadata TEXT NOT NULL
            )""",
            # slot 0 is the current checkpoint; slots 1.. are archived ones, oldest first.
            """CREATE TABLE {s}.checkpoints (
                key TEXT NOT NULL,
                slot INTEGER NOT NULL,
                session_id TEXT NOT NULL,
                driver TEXT NOT NULL,
                fingerprint TEXT NOT NULL,
                run_id TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                data TEXT NOT NULL,
                PRIMARY KEY (key, slot)
            )""",
            """CREATE TABLE {s}.receipts (
                key TEXT NOT NULL,
                message_id TEXT NOT NULL,
                delivered_at DOUBLE PRECISION NOT NULL,
                seq BIGSERIAL,
                PRIMARY KEY (key, message_id)
            )""",
            """CREATE TABLE {s}.history (
                key TEXT NOT NULL,
                position INTEGER NOT NULL,
                kind TEXT NOT NULL,
                text TEXT NOT NULL,
                at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (key, position)
            )""",
            """CREATE TABLE {s}.leases (
                key TEXT PRIMARY KEY,
                owner TEXT NOT NULL,
                token TEXT NOT NULL,
                expires_at DOUBLE PRECISION NOT NULL,
                acquired_at DOUBLE PRECISION NOT NULL,
                holder_host TEXT NOT NULL,
                holder_pid INTEGER NOT NULL,
                holder_started TEXT NOT NULL
            )""",
        ),
    ),
    (
        2,
        "an index that pages the thread list newest first",
        ("CREATE INDEX threads_listing ON {s}.threads (updated_at DESC, key)",),
    ),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]

_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def quoted_schema(schema: str) -> str:
    """``schema`` checked (lower-case letters, digits, underscores) and quoted for SQL."""
    if not isinstance(schema, str) or not _NAME.fullmatch(schema):
        raise ValueError(
            f"Postgres store schema must be a lower-case SQL name (letters, digits, _; at most 63), got {schema!r}"
        )
    return f'"{schema}"'


async def migrate(
    conn: AsyncConnection[object], schema: str, store: str, migrations: tuple[Migration, ...] = MIGRATIONS
) -> int:
    """Create or migrate the store's tables in ``schema``; returns the schema version now in force.

    Everything happens in one transaction holding an advisory lock on the schema's name, so processes that open a
    new store at the same moment agree on one schema; a schema written by a newer adaptor_nb is refused untouched.
    """
    s = quoted_schema(schema)
    known = migrations[-1][0]
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"adaptor_nb.threadstore:{schema}",))
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {s}.schema_migrations "
            "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        cur = await conn.execute(f"SELECT COALESCE(MAX(version), 0) FROM {s}.schema_migrations")
        row = await cur.fetchone()
        version = int(row[0]) if row else 0  # type: ignore[index]
        if version > known:
            raise ThreadStoreError(
                f"thread store {store} schema {schema!r} has schema version {version}, newer than the {known} this "
                "adaptor_nb understands; upgrade adaptor_nb, or pass another schema= (the schema was left untouched)",
                details={"store": store, "schema": schema, "version": version, "known": known},
            )
        for number, name, statements in migrations:
            if number > version:
                for statement in statements:
                    await conn.execute(statement.replace("{s}", s))
                await conn.execute(f"INSERT INTO {s}.schema_migrations (version, name) VALUES (%s, %s)", (number, name))
    return max(version, known)
