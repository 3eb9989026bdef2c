"""The JSON-RPC reader against a stand-in app-server that writes hostile lines: the reader survives every line,
every request is answered or fails, and answers are matched to their own request only."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adaptor_nb.driver import CLIProcess
from adaptor_nb.drivers.codex._rpc import INTERNAL_ERROR, Garbage, RpcClient, RpcError

pytestmark = pytest.mark.codex

PEER = str(Path(__file__).with_name("hostile_peer.py"))


@pytest.fixture
async def peer() -> AsyncIterator[RpcClient]:
    proc = await CLIProcess.start([sys.executable, PEER])
    client = RpcClient(proc, retry_delays=())
    client.start()
    try:
        yield client
    finally:
        await proc.close(grace=1.0)
        await client.aclose()


async def ask(client: RpcClient, *lines: str) -> Any:
    # The bound only turns a regression into a failure instead of a hang.
    return await asyncio.wait_for(client.request("say", {"lines": list(lines)}), 30)


@pytest.mark.parametrize("code", ["oops", None, [1, 2], {"a": 1}, 1.5, True])
async def test_an_error_whose_code_is_not_an_integer_still_fails_the_request(peer: RpcClient, code: Any) -> None:
    error = json.dumps({"code": code, "message": "bad"})
    with pytest.raises(RpcError, match="bad") as caught:
        await ask(peer, '{"id": @ID@, "error": ' + error + "}")
    assert caught.value.code == INTERNAL_ERROR
    # The reader is still alive: the next request is answered.
    assert await ask(peer, '{"id": @ID@, "result": 1}') == 1


async def test_a_numeric_string_code_is_read_as_its_number(peer: RpcClient) -> None:
    with pytest.raises(RpcError) as caught:
        await ask(peer, '{"id": @ID@, "error": {"code": "-32001", "message": "busy"}}')
    assert caught.value.code == -32001


async def test_json_nested_too_deep_is_garbage_and_the_answer_after_it_arrives(peer: RpcClient) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    deep_obj = '{"a":' * 5_000 + "1" + "}" * 5_000
    assert await ask(peer, deep, deep_obj, '{"id": @ID@, "result": "after"}') == "after"
    garbage = [peer.inbound.get_nowait() for _ in range(peer.inbound.qsize())]
    assert [type(g) for g in garbage] == [Garbage, Garbage]


async def test_an_answer_with_a_boolean_id_is_not_taken_for_request_1(peer: RpcClient) -> None:
    result = await ask(peer, '{"id": true, "result": "wrong"}', '{"id": @ID@, "result": "right"}')
    assert result == "right"


# -- whole runs through a stand-in app-server ------------------------------------------------------------

APP = str(Path(__file__).with_name("fake_app_server.py"))


def note(method: str, **params: Any) -> str:
    return json.dumps({"method": method, "params": {"threadId": "thr_1", **params}})


def delta(text: str) -> str:
    return note("item/agentMessage/delta", turnId="@TURN@", itemId="m1", delta=text)


def message(text: str) -> str:
    item = {"type": "agentMessage", "id": "m1", "text": text}
    return note("item/completed", turnId="@TURN@", item=item)


def completed(status: Any = "completed", turn_id: str = "@TURN@") -> str:
    return note("turn/completed", turn={"id": turn_id, "status": status})


async def run_script(tmp_path: Path, script: dict[str, Any], **config: Any) -> tuple[list[Any], Any, Any]:
    from adaptor_nb import Agent, Done
    from adaptor_nb.drivers.codex import Config, Driver

    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    cfg = Config(command=[sys.executable, APP, str(path)], grace_period=1.0, startup_timeout=20.0, **config)
    events: list[Any] = []
    async with Agent(Driver(cfg), workspace=str(tmp_path)) as agent:
        stream = agent.send("go")

        async def collect() -> None:
            async for ev in stream.events():
                events.append(ev)

        await asyncio.wait_for(collect(), 60)  # a regression fails instead of hanging the suite
    (done,) = [e for e in events if isinstance(e, Done)]
    return events, done.result, done.err


async def test_a_stale_turn_completed_is_not_taken_for_the_next_turn(tmp_path: Path) -> None:
    stale = [completed(turn_id=""), completed(turn_id="turn_0"), completed()]
    script = {"before_initialize": stale, "turn": [delta("the answer"), message("the answer"), completed()]}
    _events, result, err = await run_script(tmp_path, script)
    assert err is None and result is not None and result.text == "the answer"


@pytest.mark.parametrize("status", [["completed"], {"s": "completed"}, 1, None, "weird"])
async def test_a_turn_with_an_unknown_status_fails_with_the_partial_text(tmp_path: Path, status: Any) -> None:
    from adaptor_nb import AgentFailed

    _events, _result, err = await run_script(tmp_path, {"turn": [delta("partial"), completed(status)]})
    assert isinstance(err, AgentFailed), err
    assert "unknown status" in err.message
    assert err.result is not None and err.result.text == "partial"


async def test_an_unanswered_turn_start_is_bounded_by_idle_timeout(tmp_path: Path) -> None:
    from adaptor_nb import AgentFailed

    _events, _result, err = await run_script(tmp_path, {"answer_turn": False}, idle_timeout=1.0)
    assert isinstance(err, AgentFailed)
    assert "did not start the turn" in err.message and "idle_timeout" in err.message


@pytest.mark.parametrize(
    "line",
    [
        note("item/started", turnId="@TURN@", item="a string"),
        note("item/completed", turnId="@TURN@", item=["x"]),
        note("item/completed", turnId="@TURN@", item={"type": "commandExecution", "id": [1], "command": 5}),
        note("item/agentMessage/delta", turnId="@TURN@", itemId={"a": 1}, delta=[1]),
        "[" * 100_000 + "]" * 100_000,
    ],
)
async def test_a_wrong_typed_notification_never_crashes_the_run(tmp_path: Path, line: str) -> None:
    script = {"turn": [delta("before "), line, delta("after"), message("before after"), completed()]}
    _events, result, err = await run_script(tmp_path, script)
    assert err is None, err
    assert result is not None and result.text == "before after"
