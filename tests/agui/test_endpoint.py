"""The HTTP endpoint against a real server on loopback, driven with httpx: SSE and NDJSON, the bearer token, 422,
413, RUN_ERROR, supplements, a disconnect that leaves the run going, a reconnect, and a clean shutdown."""

import asyncio
import json
from collections.abc import AsyncIterator

import httpx
import pytest

from adaptor_nb import Agent, MessageState
from adaptor_nb.bridges import agui
from adaptor_nb.drivers import reference as ref
from adaptor_nb.threadstore import MemoryStore

from .client import body, run, sse_events
from .frames import findings

TOKEN = "s3cret-token"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as c:
        yield c


async def serving(agent: Agent, **options: object) -> agui.Server:
    options.setdefault("token", TOKEN)
    return await agui.serve(agui.app(agent, **options))  # type: ignore[arg-type]


async def test_a_plain_run_streams_a_valid_ag_ui_run(client: httpx.AsyncClient) -> None:
    agent = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(ref.Text("hello there", chunk=3)))))
    srv = await serving(agent)
    try:
        assert srv.url.startswith("http://127.0.0.1:") and srv.host == "127.0.0.1"
        events = await run(client, srv.url, body("t1", ("u1", "hi")), TOKEN)
        assert events[0]["type"] == "RUN_STARTED" and events[0]["threadId"] == "t1" and events[0]["runId"] == "r1"
        assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["result"]["text"] == "hello there"
        assert "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT") == "hello there"
        assert findings(events) == []
        record = await agent.thread(agui.thread_key("t1")).record()
        assert record is not None
    finally:
        await srv.stop()


async def test_the_token_is_required_unless_turned_off(client: httpx.AsyncClient) -> None:
    srv = await serving(Agent(ref.Driver()))
    try:
        for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": TOKEN}):
            response = await client.post(srv.url, json=body("t", ("u", "hi")), headers=headers)
            assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
    finally:
        await srv.stop()
    generated = agui.app(Agent(ref.Driver()))
    assert generated.token and len(generated.token) >= 24
    open_srv = await agui.serve(agui.app(Agent(ref.Driver()), token=False))
    try:
        events = await run(client, open_srv.url, body("t", ("u", "hi")), None)
        assert events[-1]["type"] == "RUN_FINISHED"
    finally:
        await open_srv.stop()


async def test_malformed_input_gets_422_naming_the_field_and_a_large_body_413(client: httpx.AsyncClient) -> None:
    srv = await serving(Agent(ref.Driver()), max_body=2000)
    auth = {"authorization": f"Bearer {TOKEN}"}
    try:
        missing = {"threadId": "t", "runId": "r"}
        response = await client.post(srv.url, json=missing, headers=auth)
        assert response.status_code == 422 and response.json()["field"] == "messages"
        wrong = body("t", ("u", "hi"))
        wrong["messages"][0]["role"] = "robot"
        response = await client.post(srv.url, json=wrong, headers=auth)
        assert response.status_code == 422 and response.json()["field"].startswith("messages.0")
        response = await client.post(srv.url, content=b"{not json", headers=auth)
        assert response.status_code == 422 and response.json()["field"] == "body"
        response = await client.post(srv.url, json=body("t", ("u", "x" * 5000)), headers=auth)
        assert response.status_code == 413

        async def chunks() -> AsyncIterator[bytes]:  # no content-length: the limit holds while reading
            for _ in range(10):
                yield b" " * 500

        response = await client.post(srv.url, content=chunks(), headers=auth)
        assert response.status_code == 413
    finally:
        await srv.stop()


async def test_ndjson_on_request(client: httpx.AsyncClient) -> None:
    srv = await serving(Agent(ref.Driver(scenario=ref.Scenario("plain text"))))
    try:
        headers = {"authorization": f"Bearer {TOKEN}", "accept": "application/x-ndjson"}
        response = await client.post(srv.url, json=body("t", ("u", "hi")), headers=headers)
        assert response.headers["content-type"].startswith("application/x-ndjson")
        events = [json.loads(line) for line in response.text.splitlines()]
        assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"
        assert findings(events) == []
    finally:
        await srv.stop()


async def test_resume_only_with_an_unknown_thread_is_a_run_error(client: httpx.AsyncClient) -> None:
    srv = await serving(Agent(ref.Driver(), thread_store=MemoryStore()), resume_only=True)
    try:
        events = await run(client, srv.url, body("never-seen", ("u", "hi")), TOKEN)
        assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_ERROR"
        assert events[-1]["code"] == "ThreadNotFoundError", events[-1]
        empty = await run(client, srv.url, body("", ("u", "hi")), TOKEN)
        assert empty[-1]["type"] == "RUN_ERROR" and empty[-1]["code"] == "invalid_thread_id"
        events = await run(client, srv.url, body("t", resume=[{"interruptId": "i1", "status": "resolved"}]), TOKEN)
        assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "unknown_interrupt"
        assert findings(events) == []
    finally:
        await srv.stop()


async def test_a_message_to_an_active_run_is_a_supplement_with_receipts(client: httpx.AsyncClient) -> None:
    gate = ref.Gate()
    agent = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("working ", gate, "done"))))
    srv = await serving(agent, key=str)
    try:
        first = asyncio.ensure_future(run(client, srv.url, body("t", ("u1", "go")), TOKEN))
        await gate.reached.wait()
        second = asyncio.ensure_future(
            run(client, srv.url, body("t", ("u1", "go"), ("u2", "also"), run_id="r2"), TOKEN)
        )
        live = srv.app.bridge.lives["t"]
        await live.until(lambda: "u2" in live.message_ids)  # the second request reached the bridge
        gate.open()
        one, two = await first, await second
        for events in (one, two):
            assert events[-1]["type"] == "RUN_FINISHED" and findings(events) == []
        assert two[0]["runId"] == "r2"
        receipts = [e["value"] for e in two if e["type"] == "CUSTOM" and e["name"] == "adaptor_nb.MessageUpdate"]
        assert receipts and receipts[-1]["id"] == "u2" and receipts[-1]["state"] == MessageState.DELIVERED.value
        result = await live.stream
        assert [m.id for m in result.messages()] == ["u2"]
    finally:
        await srv.stop()


async def test_a_disconnect_leaves_the_run_going_and_a_reconnect_gets_the_active_run(
    client: httpx.AsyncClient,
) -> None:
    gate, gate2 = ref.Gate(), ref.Gate()
    agent = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("before ", gate, "middle ", gate2, "after"))))
    srv = await serving(agent, key=str)
    headers = {"authorization": f"Bearer {TOKEN}"}
    try:
        async with client.stream("POST", srv.url, json=body("t", ("u1", "go")), headers=headers) as response:
            async for ev in sse_events(response):
                if ev["type"] == "TEXT_MESSAGE_CONTENT":
                    break  # the client goes away mid-run
        live = srv.app.bridge.lives["t"]
        await live.until(lambda: live.subscribers == 0)  # the server noticed the disconnect
        await gate.reached.wait()
        gate.open()
        await gate2.reached.wait()
        assert not live.stream.done
        again = asyncio.ensure_future(run(client, srv.url, body("t", ("u1", "go"), run_id="r2"), TOKEN))
        await live.until(lambda: live.subscribers == 1)  # the reconnect attached
        gate2.open()
        events = await again
        assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["result"]["text"] == "before middle after"
        assert "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT") == "after"
        assert findings(events) == []
        assert (await live.stream).text == "before middle after"
    finally:
        await srv.stop()


async def test_stop_ends_the_runs_it_started_and_leaves_nothing_running(client: httpx.AsyncClient) -> None:
    gate = ref.Gate()
    agent = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("x", gate))))
    srv = await serving(agent, key=str)
    pending = asyncio.ensure_future(run(client, srv.url, body("t", ("u1", "go")), TOKEN))
    await gate.reached.wait()
    live = srv.app.bridge.lives["t"]
    await srv.stop()
    events = await pending
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"] == {"type": "cancelled"}
    assert live.stream.done and not srv.running
    left = [t for t in asyncio.all_tasks() if t.get_name().startswith("agui-")]
    assert left == []
    with pytest.raises(httpx.ConnectError):
        await client.post(srv.url, json=body("t", ("u2", "again")))


async def test_concurrent_first_messages_on_an_idle_thread_start_one_run_and_join_it(
    client: httpx.AsyncClient,
) -> None:
    gate = ref.Gate()
    agent = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("one run ", gate, "for all"))))

    async def factory() -> Agent:  # an Agent made on first use: every early request waits for it
        await asyncio.sleep(0)
        return agent

    srv = await serving(factory, key=str)  # type: ignore[arg-type]
    try:
        posts = [
            asyncio.ensure_future(run(client, srv.url, body("t", (f"u{i}", f"message {i}"), run_id=f"r{i}"), TOKEN))
            for i in range(8)
        ]
        await gate.reached.wait()
        live = srv.app.bridge.lives["t"]
        await live.until(lambda: len(live.message_ids) == 8)  # every request reached the run
        gate.open()
        runs = await asyncio.gather(*posts)
        assert all(events[-1]["type"] == "RUN_FINISHED" for events in runs), [e[-1] for e in runs]
        assert {events[-1]["result"]["runId"] for events in runs} == {live.stream.run_id}
        assert all(findings(events) == [] for events in runs)
        assert len((await live.stream).messages()) == 7
    finally:
        await srv.stop()


async def test_a_failing_agent_factory_ends_the_run_with_run_error_and_the_server_stays_up(
    client: httpx.AsyncClient,
) -> None:
    calls = 0

    def factory() -> Agent:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("no credentials yet")
        return Agent(ref.Driver())

    srv = await serving(factory)  # type: ignore[arg-type]
    try:
        failed = await run(client, srv.url, body("t", ("u1", "hi")), TOKEN)
        assert [e["type"] for e in failed] == ["RUN_STARTED", "RUN_ERROR"]
        assert failed[-1]["code"] == "internal_error" and "no credentials yet" in failed[-1]["message"]
        assert findings(failed) == []
        again = await run(client, srv.url, body("t", ("u2", "hi"), run_id="r2"), TOKEN)
        assert again[-1]["type"] == "RUN_FINISHED"
    finally:
        await srv.stop()


async def test_clients_are_not_left_waiting_if_the_bridge_stops_following_a_run(client: httpx.AsyncClient) -> None:
    gate = ref.Gate()
    agent = Agent(ref.Driver(scenario=ref.Scenario(ref.Turn("x", gate, "y"))))
    srv = await serving(agent, key=str)
    try:
        pending = asyncio.ensure_future(run(client, srv.url, body("t", ("u1", "go")), TOKEN))
        await gate.reached.wait()
        live = srv.app.bridge.lives["t"]
        await live.until(lambda: live.subscribers == 1)
        assert live._task is not None
        live._task.cancel()  # as if the pump failed
        events = await pending
        assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "internal_error"
        assert findings(events) == []
        gate.open()
        await live.stream
    finally:
        await srv.stop()
