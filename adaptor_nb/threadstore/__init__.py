"""Thread stores: where Threads keep checkpoints, leases, receipts and continuity history."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._naming import lazy_exports

# public name -> defining module (SQLiteStore loads sqlite3, PostgresStore psycopg, only when used)
_PUBLIC: dict[str, str] = {
    "FinalizeRequest": "._protocol",
    "HistoryEntry": "._protocol",
    "Lease": "._protocol",
    "MemoryStore": "._memory",
    "Postgres": "._postgres",
    "PostgresStore": "._postgres",
    "SQLiteStore": "._sqlite",
    "Store": "._protocol",
    "ThreadRecord": "._protocol",
    "ThreadStoreError": "._errors",
}

if TYPE_CHECKING:
    from ._errors import ThreadStoreError as ThreadStoreError
    from ._memory import MemoryStore as MemoryStore
    from ._postgres import Postgres as Postgres
    from ._postgres import PostgresStore as PostgresStore
    from ._protocol import FinalizeRequest as FinalizeRequest
    from ._protocol import HistoryEntry as HistoryEntry
    from ._protocol import Lease as Lease
    from ._protocol import Store as Store
    from ._protocol import ThreadRecord as ThreadRecord
    from ._sqlite import SQLiteStore as SQLiteStore

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), _PUBLIC)
