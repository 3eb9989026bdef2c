"""Thread stores: where Threads keep checkpoints, leases, receipts and continuity history."""

from typing import TYPE_CHECKING

from ._memory import MemoryStore
from ._protocol import FinalizeRequest, HistoryEntry, Lease, Store, ThreadRecord

if TYPE_CHECKING:
    from ._sqlite import SQLiteStore

__all__ = ["FinalizeRequest", "HistoryEntry", "Lease", "MemoryStore", "SQLiteStore", "Store", "ThreadRecord"]


def __getattr__(name: str) -> object:  # SQLiteStore loads sqlite3 only when used
    if name == "SQLiteStore":
        from ._sqlite import SQLiteStore

        return SQLiteStore
    raise AttributeError(name)
