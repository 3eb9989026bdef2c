"""The public thread store conformance suite: every Store must pass it before a Thread may rely on it."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, NoReturn

from .._errors import ThreadAlreadyExistsError, ThreadBusyError, ThreadLeaseLostError
from ..driver._spi import Checkpoint
from ..threadstore._protocol import (
    HISTORY_LIMIT,
    RECEIPT_LIMIT,
    RECEIPT_TTL_SECONDS,
    FinalizeRequest,
    HistoryEntry,
    Lease,
    Store,
)

__all__ = ["STORE_CHECKS", "run_store_conformance"]

StoreFactory = Callable[[], "Store | Awaitable[Store]"]
TTL = 30.0
SHORT_TTL = 0.2


class _Breach(AssertionError):
    """A store broke the contract."""


def _fail(message: str) -> NoReturn:
    raise _Breach(message)


def _expect(condition: bool, message: str) -> None:
    if not condition:
        _fail(message)


async def _raises(kind: type[BaseException], action: Awaitable[Any], what: str) -> BaseException:
    try:
        value = await action
    except kind as exc:
        return exc
    except Exception as exc:
        _fail(f"{what}: expected {kind.__name__}, got {type(exc).__name__}: {exc}")
    _fail(f"{what}: expected {kind.__name__}, but it succeeded and returned {value!r}")


async def _until_expired(lease: Lease) -> None:
    """Wait until the lease's expiry time has passed (expiry is what is under test, so time must pass)."""
    await asyncio.sleep(max(0.0, lease.expires_at + 0.05 - time.time()))


def _checkpoint(session: str, **data: Any) -> Checkpoint:
    return Checkpoint(
        session_id=session,
        driver="conformance",
        fingerprint="fp-1",
        run_id=f"run-{session}",
        created_at=1_700_000_000.125,
        data=dict(data),
    )


# --- leases -----------------------------------------------------------------------------------------------


async def check_resolve_missing(store: Store) -> None:
    _expect(await store.resolve("never-written") is None, "resolve() of an unknown key must return None")


async def check_acquire_returns_lease(store: Store) -> None:
    before = time.time()
    lease = await store.acquire_lease("k", "owner-a", TTL)
    _expect(lease.key == "k" and lease.owner == "owner-a", f"lease names the wrong key/owner: {lease!r}")
    _expect(bool(lease.token), "a lease must carry a non-empty token")
    _expect(
        before + TTL - 1 <= lease.expires_at <= time.time() + TTL + 1,
        f"lease.expires_at should be about now + ttl ({before + TTL:.3f}), got {lease.expires_at:.3f}",
    )


async def check_other_owner_is_busy(store: Store) -> None:
    await store.acquire_lease("k", "owner-a", TTL)
    exc = await _raises(ThreadBusyError, store.acquire_lease("k", "owner-b", TTL), "second owner on a held lease")
    _expect(
        getattr(exc, "key", None) == "k",
        f"ThreadBusyError.key should be 'k', got {getattr(exc, 'key', None)!r}",
    )


async def check_leases_are_per_key(store: Store) -> None:
    await store.acquire_lease("k1", "owner-a", TTL)
    lease = await store.acquire_lease("k2", "owner-b", TTL)
    _expect(lease.key == "k2", "a lease on one key must not block another key")


async def check_keys_are_verbatim(store: Store) -> None:
    keys = ["Review", "review", " review", "réview ✓", "a/b:c'd\"e", "x" * 300]
    for key in keys:
        lease = await store.acquire_lease(key, "owner-a", TTL)
        await store.finalize(lease, FinalizeRequest(status=key))
    for key in keys:
        record = await store.resolve(key)
        _expect(record is not None and record.key == key, f"key {key!r} was not stored verbatim: {record!r}")
        _expect(record is not None and record.last_status == key, f"key {key!r} resolved another key's record")
    await _raises(ThreadBusyError, store.acquire_lease("Review", "owner-b", TTL), "busy check on key 'Review'")


async def check_same_owner_reacquires(store: Store) -> None:
    first = await store.acquire_lease("k", "owner-a", TTL)
    second = await store.acquire_lease("k", "owner-a", TTL)
    await store.finalize(second, FinalizeRequest(status="by-second"))
    if first.token != second.token:
        await _raises(
            ThreadLeaseLostError,
            store.finalize(first, FinalizeRequest(status="by-first")),
            "finalize with a lease replaced by the same owner's newer one",
        )
    await _raises(ThreadBusyError, store.acquire_lease("k", "owner-b", TTL), "other owner after a re-acquire")


async def check_expired_lease_is_taken_over(store: Store) -> None:
    old = await store.acquire_lease("k", "owner-a", SHORT_TTL)
    await _until_expired(old)
    new = await store.acquire_lease("k", "owner-b", TTL)
    _expect(new.owner == "owner-b" and new.token != old.token, f"takeover lease looks wrong: {new!r}")
    await _raises(ThreadLeaseLostError, store.finalize(old, FinalizeRequest()), "finalize with a taken-over lease")
    await _raises(ThreadLeaseLostError, store.renew_lease(old, TTL), "renew of a taken-over lease")
    await store.release_lease(old)
    await _raises(ThreadBusyError, store.acquire_lease("k", "owner-a", TTL), "release of a stale lease")
    await store.finalize(new, FinalizeRequest(status="new-owner"))


async def check_expired_lease_cannot_write(store: Store) -> None:
    lease = await store.acquire_lease("k", "owner-a", SHORT_TTL)
    await _until_expired(lease)
    await _raises(ThreadLeaseLostError, store.finalize(lease, FinalizeRequest()), "finalize after the lease expired")
    await _raises(ThreadLeaseLostError, store.renew_lease(lease, TTL), "renew after the lease expired")
    _expect(await store.resolve("k") is None, "a rejected finalize must not write a record")


async def check_renew_extends(store: Store) -> None:
    lease = await store.acquire_lease("k", "owner-a", SHORT_TTL)
    renewed = await store.renew_lease(lease, TTL)
    _expect(
        (renewed.key, renewed.owner, renewed.token) == (lease.key, lease.owner, lease.token),
        f"renew must keep key/owner/token: {lease!r} -> {renewed!r}",
    )
    _expect(renewed.expires_at > lease.expires_at, "renew must move expires_at later")
    await _until_expired(lease)
    await _raises(ThreadBusyError, store.acquire_lease("k", "owner-b", TTL), "other owner after a renewal")
    await store.finalize(renewed, FinalizeRequest(status="renewed"))


async def check_release_frees_the_key(store: Store) -> None:
    lease = await store.acquire_lease("k", "owner-a", TTL)
    await store.release_lease(lease)
    await store.release_lease(lease)
    await _raises(ThreadLeaseLostError, store.renew_lease(lease, TTL), "renew after release")
    await _raises(ThreadLeaseLostError, store.finalize(lease, FinalizeRequest()), "finalize after release")
    other = await store.acquire_lease("k", "owner-b", TTL)
    _expect(other.owner == "owner-b", "another owner must get a released lease at once")


async def check_forged_lease_is_rejected(store: Store) -> None:
    real = await store.acquire_lease("k", "owner-a", TTL)
    forgeries = {
        "a made-up token": Lease("k", "owner-a", real.token + "x", real.expires_at),
        "another owner's name": Lease("k", "owner-b", real.token, real.expires_at),
        "a key nobody leased": Lease("other", "owner-a", real.token, real.expires_at),
    }
    for what, lease in forgeries.items():
        await _raises(ThreadLeaseLostError, store.finalize(lease, FinalizeRequest()), f"finalize with {what}")
    _expect(await store.resolve("k") is None, "a rejected finalize must not write a record")
    _expect(await store.resolve("other") is None, "a rejected finalize must not write a record")


async def check_one_winner_among_racing_owners(store: Store) -> None:
    outcomes = await asyncio.gather(
        *(store.acquire_lease("k", f"owner-{i}", TTL) for i in range(8)), return_exceptions=True
    )
    winners = [o for o in outcomes if isinstance(o, Lease)]
    losers = [o for o in outcomes if isinstance(o, ThreadBusyError)]
    _expect(
        len(winners) == 1,
        f"exactly one of 8 racing owners must win the lease, got {len(winners)}: {outcomes}",
    )
    _expect(len(losers) == 7, f"the 7 others must get ThreadBusyError, got {outcomes}")


# --- finalize ---------------------------------------------------------------------------------------------


async def check_finalize_creates_record(store: Store) -> None:
    lease = await store.acquire_lease("k", "owner-a", TTL)
    cp = _checkpoint("s1", nested={"list": [1, 2.5, "x", None, True]}, text="ünïcode")
    before = time.time()
    saved = await store.finalize(
        lease,
        FinalizeRequest(
            driver="conformance",
            fingerprint="fp-1",
            checkpoint=cp,
            status="ok",
            run_id="run-1",
            usage={"input_tokens": 10, "output_tokens": 4},
        ),
    )
    _expect(saved.key == "k", f"record key should be 'k', got {saved.key!r}")
    _expect(saved.checkpoint == cp, f"checkpoint did not round-trip: {saved.checkpoint!r} != {cp!r}")
    _expect((saved.driver, saved.fingerprint) == ("conformance", "fp-1"), "driver/fingerprint not saved")
    _expect((saved.runs, saved.last_status, saved.last_run_id) == (1, "ok", "run-1"), f"run fields: {saved!r}")
    _expect(saved.usage == {"input_tokens": 10, "output_tokens": 4}, f"usage not saved: {saved.usage!r}")
    _expect(before - 1 <= saved.created_at <= saved.updated_at <= time.time() + 1, "created_at/updated_at wrong")
    resolved = await store.resolve("k")
    _expect(resolved == saved, f"resolve() must return what finalize() saved:\n{resolved!r}\n!=\n{saved!r}")


async def check_failed_run_keeps_checkpoint(store: Store) -> None:
    lease = await store.acquire_lease("k", "owner-a", TTL)
    cp = _checkpoint("s1")
    await store.finalize(lease, FinalizeRequest(checkpoint=cp, status="ok", run_id="r1"))
    saved = await store.finalize(lease, FinalizeRequest(checkpoint=None, status="failed", run_id="r2"))
    _expect(saved.checkpoint == cp, "a finalize without a checkpoint must keep the healthy one")
    _expect((saved.runs, saved.last_status, saved.last_run_id) == (2, "failed", "r2"), f"run fields: {saved!r}")
    _expect(await store.resolve("k") == saved, "resolve() must return what finalize() saved")


async def check_new_checkpoint_replaces_or_archives(store: Store) -> None:
    lease = await store.acquire_lease("k", "owner-a", TTL)
    first, second, third = _checkpoint("s1"), _checkpoint("s2"), _checkpoint("s3")
    await store.finalize(lease, FinalizeRequest(checkpoint=first))
    saved = await store.finalize(lease, FinalizeRequest(checkpoint=second))
    _expect(saved.checkpoint == second and saved.archived == (), "a plain new checkpoint replaces the old one")
    saved = await store.finalize(lease, FinalizeRequest(checkpoint=third, archive_previous=True))
    _expect(saved.checkpoint == third, "archive_previous must still install the new checkpoint")
    _expect(saved.archived == (second,), f"archive_previous must archive the old checkpoint: {saved.archived!r}")
    saved = await store.finalize(lease, FinalizeRequest(archive_previous=True))
    _expect(
        saved.checkpoint == third and saved.archived == (second,),
        "archive without a new checkpoint is a no-op",
    )
    _expect(await store.resolve("k") == saved, "resolve() must return what finalize() saved")


async def check_archive_is_bounded(store: Store) -> None:
    lease = await store.acquire_lease("k", "owner-a", TTL)
    for i in range(HISTORY_LIMIT + 3):
        saved = await store.finalize(lease, FinalizeRequest(checkpoint=_checkpoint(f"s{i}"), archive_previous=True))
    expected = tuple(_checkpoint(f"s{i}") for i in range(2, HISTORY_LIMIT + 2))
    _expect(saved.checkpoint == _checkpoint(f"s{HISTORY_LIMIT + 2}"), "the newest checkpoint must be current")
    _expect(saved.archived == expected, f"archived checkpoints must keep the newest {HISTORY_LIMIT} in order")
    _expect(await store.resolve("k") == saved, "resolve() must return what finalize() saved")


async def check_require_absent(store: Store) -> None:
    lease = await store.acquire_lease("fork", "owner-a", TTL)
    saved = await store.finalize(lease, FinalizeRequest(status="failed", require_absent=True))
    _expect(saved.checkpoint is None, "a failed first fork run leaves no checkpoint")
    saved = await store.finalize(lease, FinalizeRequest(checkpoint=_checkpoint("s1"), require_absent=True))
    _expect(saved.checkpoint == _checkpoint("s1"), "require_absent on a record without a checkpoint must succeed")
    exc = await _raises(
        ThreadAlreadyExistsError,
        store.finalize(lease, FinalizeRequest(checkpoint=_checkpoint("s2"), status="x", require_absent=True)),
        "require_absent on a record that has a checkpoint",
    )
    _expect(getattr(exc, "key", None) == "fork", "ThreadAlreadyExistsError.key should name the thread")
    _expect(await store.resolve("fork") == saved, "a rejected require_absent finalize must change nothing")


async def check_receipts_are_merged_and_pruned(store: Store) -> None:
    lease = await store.acquire_lease("k", "owner-a", TTL)
    now = time.time()
    stale = now - RECEIPT_TTL_SECONDS - 60
    await store.finalize(lease, FinalizeRequest(receipts={"m1": now - 10, "stale": stale}))
    saved = await store.finalize(lease, FinalizeRequest(receipts={"m2": now - 5, "m1": now - 1}))
    _expect(set(saved.receipts) == {"m1", "m2"}, f"receipts should be m1, m2 (stale pruned): {saved.receipts!r}")
    _expect(saved.receipts["m1"] == now - 1, "a repeated receipt takes the newer delivery time")
    _expect(await store.resolve("k") == saved, "resolve() must return what finalize() saved")


async def check_receipts_are_bounded(store: Store) -> None:
    lease = await store.acquire_lease("k", "owner-a", TTL)
    now = time.time()
    older = {f"old-{i}": now - 10_000 + i for i in range(RECEIPT_LIMIT // 2 + 10)}
    newer = {f"new-{i}": now - 1_000 + i for i in range(RECEIPT_LIMIT // 2 + 10)}
    await store.finalize(lease, FinalizeRequest(receipts=older))
    saved = await store.finalize(lease, FinalizeRequest(receipts=newer))
    expected = dict(sorted({**older, **newer}.items(), key=lambda kv: kv[1])[-RECEIPT_LIMIT:])
    _expect(len(saved.receipts) == RECEIPT_LIMIT, f"at most {RECEIPT_LIMIT} receipts, got {len(saved.receipts)}")
    _expect(saved.receipts == expected, f"the newest {RECEIPT_LIMIT} receipts must survive")
    resolved = await store.resolve("k")
    _expect(resolved is not None and resolved.receipts == expected, "resolved receipts differ from saved ones")


async def check_history_is_bounded_and_ordered(store: Store) -> None:
    lease = await store.acquire_lease("k", "owner-a", TTL)
    entries = [
        HistoryEntry(kind="assistant" if i % 2 else "guidance", text=f"entry {i} ✓\n", at=1000.5 + i)
        for i in range(HISTORY_LIMIT + 4)
    ]
    await store.finalize(lease, FinalizeRequest(history=tuple(entries[:5])))
    saved = await store.finalize(lease, FinalizeRequest(history=tuple(entries[5:])))
    _expect(
        saved.history == tuple(entries[-HISTORY_LIMIT:]),
        f"history must keep the newest {HISTORY_LIMIT} in order",
    )
    _expect(await store.resolve("k") == saved, "resolve() must return what finalize() saved")


async def check_usage_and_run_counts(store: Store) -> None:
    lease = await store.acquire_lease("k", "owner-a", TTL)
    await store.finalize(lease, FinalizeRequest(usage={"input_tokens": 3}))
    await store.finalize(lease, FinalizeRequest(usage={"input_tokens": 4, "output_tokens": 1}, count_run=False))
    saved = await store.finalize(lease, FinalizeRequest(status="s", run_id="r"))
    _expect(saved.usage == {"input_tokens": 7, "output_tokens": 1}, f"usage must add up: {saved.usage!r}")
    _expect(saved.runs == 2, f"count_run=False must not count a run: runs={saved.runs}")
    kept = await store.finalize(lease, FinalizeRequest(count_run=False))
    _expect((kept.last_status, kept.last_run_id) == ("s", "r"), "empty status/run_id must keep the previous ones")


async def check_concurrent_finalizes_lose_nothing(store: Store) -> None:
    lease = await store.acquire_lease("k", "owner-a", TTL)
    n = 20
    await asyncio.gather(
        *(
            store.finalize(lease, FinalizeRequest(receipts={f"m{i}": time.time()}, usage={"input_tokens": 1}))
            for i in range(n)
        )
    )
    record = await store.resolve("k")
    _expect(record is not None, "concurrent finalizes wrote no record")
    assert record is not None
    _expect(record.runs == n, f"{n} concurrent finalizes must count {n} runs, got {record.runs}")
    _expect(set(record.receipts) == {f"m{i}" for i in range(n)}, "concurrent finalizes lost receipts")
    _expect(record.usage == {"input_tokens": n}, f"concurrent finalizes lost usage: {record.usage!r}")


async def check_records_are_detached(store: Store) -> None:
    lease = await store.acquire_lease("k", "owner-a", TTL)
    saved = await store.finalize(lease, FinalizeRequest(receipts={"m1": time.time()}, usage={"input_tokens": 1}))
    resolved = await store.resolve("k")
    assert resolved is not None
    for record in (saved, resolved):
        record.receipts["injected"] = 1.0
        record.usage["input_tokens"] = 999
        record.metadata["injected"] = True
    again = await store.resolve("k")
    assert again is not None
    _expect("injected" not in again.receipts, "mutating a returned record changed the store's receipts")
    _expect(again.usage == {"input_tokens": 1}, "mutating a returned record changed the store's usage")
    _expect("injected" not in again.metadata, "mutating a returned record changed the store's metadata")


# --- listing and deleting -----------------------------------------------------------------------------------


async def check_list_newest_first(store: Store) -> None:
    _expect(await store.list() == [], "a fresh store must list no records")
    for key in ("k1", "k2", "k3"):
        lease = await store.acquire_lease(key, "owner-a", TTL)
        await store.finalize(lease, FinalizeRequest(status=key))
    records = await store.list()
    _expect(sorted(r.key for r in records) == ["k1", "k2", "k3"], f"list() keys: {[r.key for r in records]}")
    stamps = [r.updated_at for r in records]
    _expect(stamps == sorted(stamps, reverse=True), f"list() must be newest first: {stamps}")
    for record in records:
        _expect(record == await store.resolve(record.key), f"list() and resolve() disagree on {record.key!r}")


async def check_delete_removes_record_and_lease(store: Store) -> None:
    lease = await store.acquire_lease("k", "owner-a", TTL)
    await store.finalize(lease, FinalizeRequest(checkpoint=_checkpoint("s1"), receipts={"m": time.time()}))
    _expect(await store.delete("k") is True, "delete() of an existing record must return True")
    _expect(await store.resolve("k") is None, "a deleted record must not resolve")
    _expect(await store.delete("k") is False, "delete() of a missing record must return False")
    other = await store.acquire_lease("k", "owner-b", TTL)
    saved = await store.finalize(other, FinalizeRequest(status="fresh"))
    _expect(
        saved.checkpoint is None and saved.receipts == {} and saved.runs == 1,
        f"delete left traces: {saved!r}",
    )


STORE_CHECKS: dict[str, Callable[[Store], Awaitable[None]]] = {
    name.removeprefix("check_"): fn
    for name, fn in list(globals().items())
    if name.startswith("check_") and inspect.iscoroutinefunction(fn)
}


async def _close(store: object) -> None:
    for name in ("aclose", "close"):
        method = getattr(store, name, None)
        if callable(method):
            outcome = method()
            if inspect.isawaitable(outcome):
                await outcome
            return


async def run_store_conformance(factory: Callable[[], Any], *, checks: Iterable[str] | None = None) -> list[str]:
    """Run the store contract checks, each on a fresh empty store; returns the names that passed.

    ``factory`` returns a Store (or an awaitable of one); a store with ``aclose()``/``close()`` is closed
    after each check. The first breach raises AssertionError naming the check. Example::

        await run_store_conformance(lambda: SQLiteStore(tmp_path / f"{uuid.uuid4().hex}.sqlite"))
    """
    names = list(STORE_CHECKS) if checks is None else list(checks)
    unknown = [n for n in names if n not in STORE_CHECKS]
    if unknown:
        raise ValueError(f"unknown store checks {unknown}; known: {sorted(STORE_CHECKS)}")
    passed: list[str] = []
    for name in names:
        made = factory()
        store: Store = await made if inspect.isawaitable(made) else made
        try:
            await STORE_CHECKS[name](store)
        except _Breach as exc:
            raise AssertionError(f"store conformance check {name!r} failed on {store!r}: {exc}") from None
        finally:
            await _close(store)
        passed.append(name)
    return passed
