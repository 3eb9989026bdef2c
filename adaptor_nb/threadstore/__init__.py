"""Thread stores: where Threads keep checkpoints, leases, receipts and continuity history."""

from ._memory import MemoryStore
from ._protocol import FinalizeRequest, HistoryEntry, Lease, Store, ThreadRecord

__all__ = ["FinalizeRequest", "HistoryEntry", "Lease", "MemoryStore", "Store", "ThreadRecord"]


def __getattr__(name: str) -> object:
    if name == "SQLiteStore":
        from ._sqlite import SQLiteStore

        return SQLiteStore
    raise AttributeError(name)
