"""The public store conformance suite passes, unchanged, on the Postgres store against a real server."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from adaptor_nb.testing import run_store_conformance
from adaptor_nb.testing._store_conformance import STORE_CHECKS
from adaptor_nb.threadstore import PostgresStore


@pytest.mark.parametrize("check", sorted(STORE_CHECKS))
async def test_postgres_store_passes(check: str, pg_factory: Callable[..., PostgresStore]) -> None:
    assert await run_store_conformance(pg_factory, checks=[check]) == [check]


async def test_whole_suite_in_one_call(pg_factory: Callable[..., PostgresStore]) -> None:
    assert await run_store_conformance(pg_factory) == list(STORE_CHECKS)
