"""The public store conformance suite passes on both built-in stores and catches a broken store."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from adaptor_nb.testing import run_store_conformance
from adaptor_nb.testing._store_conformance import STORE_CHECKS
from adaptor_nb.threadstore import FinalizeRequest, Lease, MemoryStore, SQLiteStore, ThreadRecord


@pytest.mark.parametrize("check", sorted(STORE_CHECKS))
async def test_memory_store_passes(check: str) -> None:
    assert await run_store_conformance(MemoryStore, checks=[check]) == [check]


@pytest.mark.parametrize("check", sorted(STORE_CHECKS))
async def test_sqlite_store_passes(check: str, sqlite_factory: Callable[[], SQLiteStore]) -> None:
    assert await run_store_conformance(sqlite_factory, checks=[check]) == [check]


async def test_whole_suite_runs_with_an_async_factory(sqlite_factory: Callable[[], SQLiteStore]) -> None:
    async def make() -> SQLiteStore:
        return sqlite_factory()

    passed = await run_store_conformance(make, checks=["finalize_creates_record", "require_absent"])
    assert passed == ["finalize_creates_record", "require_absent"]


class NeverBusyStore(MemoryStore):
    """A broken store: it hands the lease to everyone."""

    async def acquire_lease(self, key: str, owner: str, ttl: float) -> Lease:
        self._leases.pop(key, None)
        return await super().acquire_lease(key, owner, ttl)


class ForgetfulStore(MemoryStore):
    """A broken store: finalize ignores receipts."""

    async def finalize(self, lease: Lease, request: FinalizeRequest) -> ThreadRecord:
        from dataclasses import replace

        return await super().finalize(lease, replace(request, receipts={}))


async def test_suite_names_the_breached_check_for_a_store_without_exclusion() -> None:
    with pytest.raises(AssertionError, match=r"'other_owner_is_busy'.*expected ThreadBusyError"):
        await run_store_conformance(NeverBusyStore, checks=["other_owner_is_busy"])


async def test_suite_stops_at_the_first_breach() -> None:
    with pytest.raises(AssertionError, match="receipts_are_merged_and_pruned"):
        await run_store_conformance(ForgetfulStore)


async def test_unknown_check_name_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown store checks \\['nope'\\]"):
        await run_store_conformance(MemoryStore, checks=["nope"])
