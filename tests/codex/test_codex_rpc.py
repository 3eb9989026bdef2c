"""The JSON-RPC client: the real app-server's protocol errors, and overload retries, ordering, long lines and EOF
against a scripted stdio peer."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adaptor_nb.driver import CLIProcess
from adaptor_nb.drivers.codex._rpc import (
    OVERLOADED,
    Closed,
    Garbage,
    Notification,
    RpcClient,
    RpcError,
    ServerClosedError,
    ServerRequest,
)

from .conftest import API_KEY, API_KEY_ENV, NetworkTripwire

PEER = str(Path(__file__).with_name("scripted_peer.py"))


@pytest.fixture
async def peer() -> AsyncIterator[RpcClient]:
    proc = await CLIProcess.start([sys.executable, PEER])
    client = RpcClient(proc, retry_delays=(0.01, 0.01, 0.01))
    client.start()
    try:
        yield client
    finally:
        await proc.close(grace=1.0)
        await client.aclose()


async def test_an_overloaded_answer_is_retried_until_it_succeeds(peer: RpcClient) -> None:
    result = await peer.request("busy", {"n": 2, "key": "a"})
    assert result == {"attempts": 3}


async def test_overload_retries_are_bounded(peer: RpcClient) -> None:
    with pytest.raises(RpcError) as caught:
        await peer.request("busy", {"n": 100, "key": "b"})
    assert caught.value.code == OVERLOADED
    assert caught.value.method == "busy"
    follow_up = await peer.request("busy", {"n": 0, "key": "b"})
    assert follow_up == {"attempts": 5}  # 1 try + 3 retries were refused, this is the 5th


async def test_other_errors_are_not_retried(peer: RpcClient) -> None:
    with pytest.raises(RpcError, match="unknown method nope") as caught:
        await peer.request("nope")
    assert caught.value.code == -32600


async def test_inbound_traffic_keeps_its_order_and_survives_garbage_and_long_lines(peer: RpcClient) -> None:
    assert await peer.request("burst") == {"ok": True}
    items = [peer.inbound.get_nowait() for _ in range(4)]
    assert isinstance(items[0], Notification) and items[0].method == "first/notification"
    assert isinstance(items[1], ServerRequest) and (items[1].id, items[1].params) == (0, {"itemId": "call_1"})
    assert isinstance(items[2], Garbage) and items[2].line == b"this line is not JSON"
    assert isinstance(items[3], Notification) and len(items[3].params["blob"]) == 5 * 1024 * 1024
    assert peer.inbound.empty()


async def test_eof_fails_the_pending_request_and_reports_the_exit(peer: RpcClient) -> None:
    with pytest.raises(ServerClosedError) as caught:
        await peer.request("exit")
    assert caught.value.returncode == 7
    assert "exiting on request" in caught.value.stderr_tail
    closed = await peer.inbound.get()
    assert isinstance(closed, Closed) and closed.returncode == 7
    with pytest.raises(ServerClosedError):
        await peer.request("busy")


@pytest.mark.codex
async def test_the_real_app_server_refuses_requests_before_initialize_and_unknown_methods(
    codex_bin: str, codex_home: Path, tmp_path: Path, tripwire: NetworkTripwire
) -> None:
    env = {"CODEX_HOME": str(codex_home), "HOME": str(tmp_path), API_KEY_ENV: API_KEY, "PATH": "/usr/bin:/bin"}
    env.update(tripwire.env())
    proc = await CLIProcess.start([codex_bin, "app-server"], env=env, cwd=str(tmp_path))
    client = RpcClient(proc)
    client.start()
    try:
        with pytest.raises(RpcError, match="Not initialized") as early:
            await client.request("thread/start", {"cwd": str(tmp_path)}, timeout=30)
        assert early.value.code == -32600
        info = {"clientInfo": {"name": "adaptor_nb_test", "version": "0"}}
        result = await client.request("initialize", info, timeout=30)
        assert result["userAgent"].startswith("adaptor_nb_test/0.171.0")
        await client.notify("initialized")
        with pytest.raises(RpcError, match="Already initialized"):
            await client.request("initialize", info, timeout=30)
        with pytest.raises(RpcError, match="unknown variant `no/such/method`") as unknown:
            await client.request("no/such/method", {}, timeout=30)
        assert unknown.value.code == -32600
        thread = await client.request("thread/start", {"cwd": str(tmp_path), "ephemeral": True}, timeout=30)
        assert thread["thread"]["ephemeral"] is True
    finally:
        await proc.close(grace=1.0)
        await client.aclose()
