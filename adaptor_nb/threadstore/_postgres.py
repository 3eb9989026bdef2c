"""A thread store on a PostgreSQL server, shared by the kernels, hosts and workers that reach it."""

from __future__ import annotations

import asyncio
import os
import select
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from . import _pg_ops as ops
from ._errors import ThreadStoreError
from ._holder import current
from ._pg_dsn import Dsn, parse_dsn, require_psycopg, server_error
from ._pg_schema import migrate, quoted_schema
from ._protocol import FinalizeRequest, Lease, ThreadRecord

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

T = TypeVar("T")


class PostgresStore:
    """A thread store in a PostgreSQL schema; every process that reaches the server shares its threads.

    Example: ``Agent(driver, thread_store=Postgres("postgresql://me@db.example:5432/team"))``. Nothing connects until
    the first call, which creates or migrates the schema's tables; a bad connection string fails at once, an
    unreachable server within ``connect_timeout`` seconds, both with a ThreadStoreError that hides the password.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "adaptor_nb",
        pool_size: int = 4,
        connect_timeout: float = 10.0,
        synchronous_commit: Literal["on", "off"] = "on",
    ) -> None:
        require_psycopg()
        if synchronous_commit not in ("on", "off"):
            raise ValueError(f"Postgres store synchronous_commit must be 'on' or 'off', got {synchronous_commit!r}")
        if not isinstance(pool_size, int) or pool_size < 1:
            raise ValueError(f"Postgres store pool_size must be a positive int, got {pool_size!r}")
        if connect_timeout <= 0:
            raise ValueError(f"Postgres store connect_timeout must be positive seconds, got {connect_timeout!r}")
        self._s = quoted_schema(schema)
        self._dsn: Dsn = parse_dsn(dsn)
        self.schema = schema
        self.pool_size = pool_size
        self.connect_timeout = float(connect_timeout)
        self.synchronous_commit = synchronous_commit
        self._pool: AsyncConnectionPool[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = os.getpid()
        self._opening: asyncio.Lock | None = None

    @property
    def dsn(self) -> str:
        """The server and database, without the password."""
        return self._dsn.shown

    def __repr__(self) -> str:
        return f"Postgres({self._dsn.shown!r}, schema={self.schema!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Sent to another process (a Dask worker) as its settings; the copy opens its own pool there.
        return (
            _rebuild,
            (self._dsn.conninfo, self.schema, self.pool_size, self.connect_timeout, self.synchronous_commit),
        )

    # --- plumbing: one pool per event loop and process -------------------------------------------------

    async def _ready(self) -> AsyncConnectionPool[Any]:
        loop = asyncio.get_running_loop()
        if self._pid != os.getpid() or self._loop is not loop:
            # A pool belongs to the loop (and process) that opened it; elsewhere the store opens another.
            self._pool, self._loop, self._opening, self._pid = None, loop, asyncio.Lock(), os.getpid()
        assert self._opening is not None
        async with self._opening:
            if self._pool is None:
                self._pool = await self._open()
        return self._pool

    async def _connect(self) -> AsyncConnection[Any]:
        from psycopg import AsyncConnection

        timeout = max(1, round(self.connect_timeout))
        try:
            return await asyncio.wait_for(
                AsyncConnection.connect(self._dsn.conninfo, autocommit=True, connect_timeout=timeout),
                self.connect_timeout + 1,
            )
        except TimeoutError:
            raise TimeoutError(f"no answer within the connect timeout of {self.connect_timeout:g}s") from None

    async def _open(self) -> AsyncConnectionPool[Any]:
        from psycopg_pool import AsyncConnectionPool

        try:
            conn = await self._connect()
        except Exception as exc:
            raise self._error(exc, "connecting") from None
        try:
            await migrate(conn, self.schema, repr(self))
        except Exception as exc:
            if isinstance(exc, ThreadStoreError):
                raise
            raise self._error(exc, "creating its tables") from None
        finally:
            await conn.close()
        # Every connection is made while opening (min_size == max_size), so no connection attempt is left running
        # in the background of a loop that may close soon (asyncio.run in a worker thread).
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            self._dsn.conninfo,
            min_size=self.pool_size,
            max_size=self.pool_size,
            kwargs={"autocommit": True, "connect_timeout": max(1, round(self.connect_timeout))},
            timeout=self.connect_timeout,
            check=_check,
            configure=self._configure,
            open=False,
            name=f"adaptor_nb-{self.schema}",
        )
        try:
            await pool.open(wait=True, timeout=self.connect_timeout + 1)
        except Exception as exc:
            await pool.close(timeout=1.0)
            raise self._error(exc, "connecting") from None
        return pool

    async def _configure(self, conn: AsyncConnection[Any]) -> None:
        # Lease changes never wait for the disk: a durable save that follows them flushes them too (the log is
        # written in order), and one lost in a crash of the server only means a lease that expires, or one that has
        # to be taken again. Saves and deletes wait for the disk unless the store says otherwise (_durable).
        await conn.execute("SET synchronous_commit = off")

    @property
    def _durable(self) -> bool:
        return self.synchronous_commit == "on"

    def _error(self, exc: BaseException, doing: str) -> ThreadStoreError:
        return server_error(repr(self), self._dsn, exc, doing)

    async def _run(self, doing: str, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        import psycopg
        from psycopg.errors import AdminShutdown
        from psycopg_pool import PoolTimeout

        for attempt in (1, 2):
            pool = await self._ready()
            try:
                async with pool.connection() as conn:
                    return await fn(conn, self._s, *args)
            except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout, OSError) as exc:
                # The server went away or cannot be reached: drop the pool (whose reconnection backs off for
                # minutes), so the next call connects afresh and works as soon as the server is back.
                if self._pool is pool:
                    self._pool = None
                    await pool.close(timeout=1.0)
                if attempt == 1 and isinstance(exc, AdminShutdown):
                    # The server ended the connection (a restart, or an administrator) before this call committed
                    # anything (a transaction it ends is rolled back): the call runs again on a fresh connection.
                    continue
                raise self._error(exc, doing) from None
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        """Close the connection pool; the store opens a new one if used again."""
        pool, self._pool = self._pool, None
        if pool is not None and self._loop is asyncio.get_running_loop() and self._pid == os.getpid():
            await pool.close()

    # --- the Store protocol ------------------------------------------------------------------------------

    async def resolve(self, key: str) -> ThreadRecord | None:
        """The record for ``key``, or None."""
        return await self._run("reading a thread", ops.resolve, key)

    async def acquire_lease(self, key: str, owner: str, ttl: float) -> Lease:
        """Take the single-writer lease on the database clock; raises ThreadBusyError if another owner holds it.

        An unexpired lease whose holder ran on this machine and has ended is taken over at once, as in SQLiteStore;
        a holder on another host keeps its lease until it expires.
        """
        _check_lease_args(key, owner, ttl)
        return await self._run("taking a lease", ops.acquire, key, owner, ttl, current())

    async def renew_lease(self, lease: Lease, ttl: float) -> Lease:
        """Extend a lease; raises ThreadLeaseLostError if it is no longer held."""
        if ttl <= 0:
            raise ValueError(f"lease ttl must be positive seconds, got {ttl!r}")
        return await self._run("renewing a lease", ops.renew, lease, ttl)

    async def release_lease(self, lease: Lease) -> None:
        """Give the lease up (no error if it already expired or moved on)."""
        await self._run("releasing a lease", ops.release, lease)

    async def finalize(self, lease: Lease, request: FinalizeRequest) -> ThreadRecord:
        """Validate the lease and apply ``request`` in one transaction; returns the saved record."""
        return await self._run("saving a thread", ops.finalize, lease, request, self._durable)

    async def list(self) -> list[ThreadRecord]:
        """Every record, newest first."""
        return await self._run("listing threads", ops.list_records)

    async def delete(self, key: str) -> bool:
        """Remove a record (and its lease); True if it existed."""
        return await self._run("deleting a thread", ops.delete, key, self._durable)


Postgres = PostgresStore


def _rebuild(
    conninfo: str, schema: str, pool_size: int, connect_timeout: float, synchronous_commit: Literal["on", "off"]
) -> PostgresStore:
    return PostgresStore(
        conninfo,
        schema=schema,
        pool_size=pool_size,
        connect_timeout=connect_timeout,
        synchronous_commit=synchronous_commit,
    )


async def _check(conn: AsyncConnection[Any]) -> None:
    """The pool's check of a connection it is about to lend: a round trip to the server only when the socket has
    something to read. An idle connection receives nothing unless the server ended it (a server that stops or
    restarts tells each connection, then closes it), so a healthy one costs no round trip here."""
    from psycopg import OperationalError
    from psycopg_pool import AsyncConnectionPool

    if conn.closed or conn.broken:
        raise OperationalError("the connection is closed")
    if _readable(conn.fileno()):
        await AsyncConnectionPool.check_connection(conn)


def _readable(fd: int) -> bool:
    """Whether ``fd`` has something to read now (poll where there is one: select() cannot take a descriptor past
    1023, which a busy kernel reaches)."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([fd], [], [], 0)[0])


def _check_lease_args(key: str, owner: str, ttl: float) -> None:
    if not isinstance(key, str) or not key:
        raise ValueError(f"thread key must be a non-empty string, got {key!r}")
    if not isinstance(owner, str) or not owner:
        raise ValueError(f"lease owner must be a non-empty string, got {owner!r}")
    if ttl <= 0:
        raise ValueError(f"lease ttl must be positive seconds, got {ttl!r}")
