"""Keep-alive progress notifications from the tool server while a call runs (they reset Claude Code's MCP idle
watchdog): sent on an SSE response when the request carries a progress token, never otherwise."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
from collections.abc import Callable
from typing import Any

from adaptor_nb import tool
from adaptor_nb.tools._host import ToolHost, route_of
from adaptor_nb.tools._keepalive import progress_token, wants_progress, while_running

HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}


def call_body(token: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "gated", "arguments": {"x": 1}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}


def stream_call(
    host: ToolHost, body: dict[str, Any], on_progress: Callable[[int], None]
) -> tuple[str, list[dict[str, Any]]]:
    """POST a tools/call and read the answer as it arrives: (content type, JSON-RPC messages in order)."""
    conn = http.client.HTTPConnection("127.0.0.1", host.port, timeout=30)
    headers = {**HEADERS, "Authorization": f"Bearer {host.token}"}
    conn.request("POST", f"/mcp/{route_of('t')}", json.dumps(body), headers)
    resp = conn.getresponse()
    kind = resp.getheader("Content-Type") or ""
    messages: list[dict[str, Any]] = []
    try:
        if not kind.startswith("text/event-stream"):
            return kind, [json.loads(resp.read())]
        while line := resp.readline():
            if not line.startswith(b"data: "):
                continue
            message = json.loads(line[6:])
            messages.append(message)
            if message.get("method") == "notifications/progress":
                on_progress(sum(m.get("method") == "notifications/progress" for m in messages))
            if "result" in message or "error" in message:
                break
        return kind, messages
    finally:
        conn.close()


async def start_host(release: asyncio.Event, arrived: asyncio.Event | None = None) -> ToolHost:
    async def gated(x: int) -> int:
        """Returns once released."""
        if arrived is not None:
            arrived.set()
        await release.wait()
        return x + 1

    host = ToolHost((tool.define(gated),))
    host.keepalive = 0.01
    await host.ensure()
    return host


async def test_a_call_with_a_progress_token_gets_keep_alives_until_its_result() -> None:
    loop = asyncio.get_running_loop()
    release = asyncio.Event()
    host = await start_host(release)

    def progressed(n: int) -> None:
        if n == 3:
            loop.call_soon_threadsafe(release.set)

    try:
        kind, messages = await asyncio.to_thread(stream_call, host, call_body("tok-1"), progressed)
        sent = host.keepalives
    finally:
        await host.close()
    assert kind.startswith("text/event-stream")
    *beats, last = messages
    assert len(beats) >= 3 and all(m["method"] == "notifications/progress" for m in beats)
    assert {m["params"]["progressToken"] for m in beats} == {"tok-1"}
    progress = [m["params"]["progress"] for m in beats]
    assert progress == sorted(progress) and len(set(progress)) == len(progress)  # increasing, as MCP requires
    assert last["id"] == 7 and last["result"]["content"][0]["text"] == "2"
    assert sent == len(beats)


async def test_a_call_without_a_progress_token_gets_a_plain_json_answer_and_no_keep_alives() -> None:
    release, arrived = asyncio.Event(), asyncio.Event()
    host = await start_host(release, arrived)
    try:
        call = asyncio.ensure_future(asyncio.to_thread(stream_call, host, call_body(None), lambda n: None))
        await arrived.wait()
        await asyncio.wait({call}, timeout=0.2)  # a window in which keep-alives (every 10 ms) would go out
        release.set()
        kind, messages = await call
        sent = host.keepalives
    finally:
        await host.close()
    assert kind.startswith("application/json")
    (answer,) = messages
    assert answer["result"]["content"][0]["text"] == "2"
    assert sent == 0


async def test_a_call_with_a_progress_token_that_ends_before_its_first_keep_alive_is_answered_as_json() -> None:
    release = asyncio.Event()
    release.set()
    host = await start_host(release)
    assert host._server is not None
    host._server.keepalive = 3600.0  # the result comes long before a keep-alive would
    try:
        kind, messages = await asyncio.to_thread(stream_call, host, call_body("tok-2"), lambda n: None)
    finally:
        await host.close()
    assert kind.startswith("application/json")
    (answer,) = messages
    assert answer["id"] == 7 and answer["result"]["content"][0]["text"] == "2"


async def test_the_servers_connections_have_tcp_nodelay() -> None:
    """Without TCP_NODELAY a response written as headers then body waits for the client's delayed ACK (~40 ms a
    request on Linux loopback). Checked on the live connection of a call in flight."""
    release, arrived = asyncio.Event(), asyncio.Event()
    host = await start_host(release, arrived)
    try:
        call = asyncio.ensure_future(asyncio.to_thread(stream_call, host, call_body(None), lambda n: None))
        await arrived.wait()
        assert host._server is not None and host._server._server is not None
        connections = list(host._server._server.server_state.connections)
        sockets = [c.transport.get_extra_info("socket") for c in connections]  # type: ignore[attr-defined]
        flags = [s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in sockets]
        release.set()
        await call
    finally:
        await host.close()
    assert flags and all(flags), flags


def test_progress_tokens_and_the_routing_test() -> None:
    assert progress_token({"progress_token": "a"}) == "a"
    assert progress_token({"progressToken": 3}) == 3
    assert progress_token({"progress_token": True}) is None
    assert progress_token(None) is None and progress_token({}) is None
    assert wants_progress(json.dumps(call_body("t")).encode())
    assert not wants_progress(json.dumps(call_body(None)).encode())
    assert not wants_progress(b'{"method": "tools/list", "params": {"_meta": {"progressToken": 1}}}')


async def test_while_running_beats_until_the_work_ends_and_a_failing_beat_stops_only_the_beats() -> None:
    done = asyncio.Event()
    beats: list[int] = []

    async def beat(n: int) -> None:
        beats.append(n)
        if n == 2:
            done.set()
        if n >= 2:
            raise ConnectionResetError("client went away")

    async def work() -> str:
        await done.wait()
        return "finished"

    assert await while_running(work(), beat, 0.001) == "finished"
    assert beats == [1, 2]


async def test_cancelling_while_running_cancels_the_work() -> None:
    started = asyncio.Event()
    cancelled: list[bool] = []

    async def work() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    async def beat(n: int) -> None:
        return None

    outer = asyncio.ensure_future(while_running(work(), beat, 0.001))
    await started.wait()
    outer.cancel()
    try:
        await outer
    except asyncio.CancelledError:
        pass
    assert cancelled == [True]


async def test_json_unless_streamed_converts_only_a_stream_whose_first_event_is_the_response() -> None:
    from adaptor_nb.tools._deferred import JsonUnlessStreamed

    sse_start = {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
    result = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    note = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}'

    async def run(*messages: dict[str, Any]) -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []

        async def send(message: Any) -> None:
            sent.append(dict(message))

        wrapper = JsonUnlessStreamed(send)
        for m in messages:
            await wrapper(m)
        return sent

    def body(data: bytes, more: bool = True) -> dict[str, Any]:
        return {"type": "http.response.body", "body": data, "more_body": more}

    # the result first, split over two chunks: one JSON answer, the rest of the stream dropped
    out = await run(
        sse_start, body(b"event: message\r\ndata: " + result[:10]), body(result[10:] + b"\r\n\r\n"), body(b"", False)
    )
    assert [m["type"] for m in out] == ["http.response.start", "http.response.body"]
    assert dict(out[0]["headers"])[b"content-type"] == b"application/json" and out[1]["body"] == result
    # a notification first: the stream goes out as it is
    frame = b"event: message\r\ndata: " + note + b"\r\n\r\n"
    out = await run(sse_start, body(frame), body(b"data: " + result + b"\r\n\r\n"), body(b"", False))
    assert out[0] == sse_start
    assert b"".join(m.get("body", b"") for m in out[1:]) == frame + b"data: " + result + b"\r\n\r\n"
    # not a stream at all: untouched
    plain = {"type": "http.response.start", "status": 202, "headers": [(b"content-type", b"application/json")]}
    assert await run(plain, body(b"{}", False)) == [plain, body(b"{}", False)]
