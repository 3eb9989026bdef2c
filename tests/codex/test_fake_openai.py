"""The fake OpenAI Responses server on its own: SSE shapes, directives, errors, holds and recording."""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._openai import Reply, example_for_schema


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as s:
        yield s


def post(
    server: FakeOpenAIServer, body: dict[str, Any], path: str = "/v1/responses"
) -> tuple[int, list[dict[str, Any]]]:
    """POST ``body`` and return the status and the parsed SSE events (or the JSON body as one event)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json", "Authorization": "Bearer sk-x"})
    try:
        resp = conn.getresponse()
        raw = resp.read().decode()
    finally:
        conn.close()
    if resp.getheader("Content-Type") != "text/event-stream":
        return resp.status, [json.loads(raw)]
    events = []
    for block in raw.split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
    return resp.status, events


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def body(*items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-fake", "stream": True, "input": list(items), **extra}


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def test_text_reply_streams_deltas_and_completes_with_usage(server: FakeOpenAIServer) -> None:
    server.enqueue(Reply.text("one two three four five six", usage=(7, 3, 2)))
    status, events = post(server, body(user("hi")))
    assert status == 200
    assert types(events)[0] == "response.created"
    assert types(events)[-1] == "response.completed"
    deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    assert "".join(deltas) == "one two three four five six"
    assert len(deltas) == 2
    done = next(e for e in events if e["type"] == "response.output_item.done")
    assert done["item"]["content"][0]["text"] == "one two three four five six"
    usage = events[-1]["response"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"], usage["input_tokens_details"]["cached_tokens"]) == (7, 3, 2)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))


def test_reasoning_comes_before_the_answer(server: FakeOpenAIServer) -> None:
    _, events = post(server, body(user("x [[think weighing options]] [[say done]]")))
    kinds = types(events)
    assert kinds.index("response.reasoning_summary_text.delta") < kinds.index("response.output_text.delta")
    reasoning = next(e for e in events if e["type"] == "response.output_item.done")["item"]
    assert reasoning["type"] == "reasoning"
    assert reasoning["summary"] == [{"type": "summary_text", "text": "weighing options"}]


def test_function_call_directive(server: FakeOpenAIServer) -> None:
    _, events = post(server, body(user('run [[tool exec_command {"cmd": "echo hi"}]]')))
    item = next(e for e in events if e["type"] == "response.output_item.done")["item"]
    assert item["type"] == "function_call"
    assert item["name"] == "exec_command"
    assert json.loads(item["arguments"]) == {"cmd": "echo hi"}
    assert item["call_id"].startswith("call_")
    assert events[-1]["response"]["output"] == [item]


def test_several_function_calls_in_one_response(server: FakeOpenAIServer) -> None:
    server.enqueue(Reply.function_calls(("lookup", {"k": "a"}), ("lookup", '{"k": "b"}'), namespace="mcp__pytools"))
    _, events = post(server, body(user("two at once")))
    items = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert [(i["type"], i["name"], i["namespace"], json.loads(i["arguments"])) for i in items] == [
        ("function_call", "lookup", "mcp__pytools", {"k": "a"}),
        ("function_call", "lookup", "mcp__pytools", {"k": "b"}),
    ]
    assert len({i["call_id"] for i in items}) == 2
    added = [e["output_index"] for e in events if e["type"] == "response.output_item.added"]
    assert added == [0, 1]
    assert types(events)[-1] == "response.completed" and events[-1]["response"]["output"] == items


def test_custom_tool_call_keeps_multiline_input(server: FakeOpenAIServer) -> None:
    patch = "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch\n"
    _, events = post(server, body(user(f"[[custom apply_patch {patch}]]")))
    item = next(e for e in events if e["type"] == "response.output_item.done")["item"]
    assert item == {**item, "type": "custom_tool_call", "name": "apply_patch", "input": patch}


def test_after_a_tool_result_the_answer_quotes_the_output(server: FakeOpenAIServer) -> None:
    out = {"type": "function_call_output", "call_id": "call_1", "output": "hi\n"}
    _, events = post(server, body(user("[[tool exec_command {}]]"), out))
    deltas = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert deltas == "Done. Last tool output: hi\n"


def test_schema_request_without_directive_gets_a_matching_example(server: FakeOpenAIServer) -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "n": {"type": "integer"}, "tags": {"type": "array"}},
        "required": ["name", "n", "tags"],
        "additionalProperties": False,
    }
    fmt = {"format": {"type": "json_schema", "strict": True, "schema": schema, "name": "out"}}
    _, events = post(server, body(user("give me json"), text=fmt))
    answer = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert json.loads(answer) == {"name": "x", "n": 1, "tags": []}
    assert server.model_requests[-1].output_schema == schema


def test_example_for_schema_handles_enums_unions_and_nested_objects() -> None:
    schema = {
        "type": "object",
        "properties": {
            "kind": {"enum": ["a", "b"]},
            "maybe": {"anyOf": [{"type": "number"}, {"type": "null"}]},
            "inner": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
            "optional": {"type": "string"},
        },
        "required": ["kind", "maybe", "inner"],
    }
    assert example_for_schema(schema) == {"kind": "a", "maybe": 1.5, "inner": {"ok": True}}


def test_error_reply_uses_the_status_and_an_openai_error_body(server: FakeOpenAIServer) -> None:
    server.enqueue(Reply.error(503, "overloaded"))
    status, events = post(server, body(user("x")))
    assert status == 503
    assert events == [{"error": {"message": "overloaded", "type": "server_error", "code": None}}]


def test_status_directive(server: FakeOpenAIServer) -> None:
    status, _ = post(server, body(user("x [[status 500]]")))
    assert status == 500


def test_incomplete_reply_ends_without_response_completed(server: FakeOpenAIServer) -> None:
    _, events = post(server, body(user("x [[incomplete partial answer]]")))
    assert "response.completed" not in types(events)
    assert "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta") == "partial answer"


def test_queue_wins_over_responder_and_responder_over_directives(server: FakeOpenAIServer) -> None:
    server.responder = lambda req: Reply.text("from responder") if "@" in req.prompt else None
    server.enqueue(Reply.text("from queue"))

    def answer(prompt: str) -> str:
        _, events = post(server, body(user(prompt)))
        return "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")

    assert answer("@ [[say directive]]") == "from queue"
    assert answer("@ [[say directive]]") == "from responder"
    assert answer("x [[say directive]]") == "directive"


def test_requests_are_recorded_with_auth_redacted(server: FakeOpenAIServer) -> None:
    post(server, body({"type": "message", "role": "user", "content": [{"type": "input_text", "text":
         "<environment_context>cwd</environment_context>"}]}, user("the prompt")))  # fmt: skip
    status, _ = post(server, {"x": 1}, path="/v1/other")
    assert status == 404
    first, second = server.requests
    assert first.headers["authorization"] == "<redacted>"
    assert first.has_auth
    assert first.prompt == "the prompt"
    assert first.user_texts() == ["the prompt"]
    assert "sk-x" not in repr(first)
    assert not second.is_model_request
    assert server.model_requests == [first]


async def test_hold_pauses_the_stream_until_set(server: FakeOpenAIServer) -> None:
    gate = server.hold("g")
    task = asyncio.create_task(asyncio.to_thread(post, server, body(user("[[hold g]] [[say released]]"))))
    request = await server.model_request(1)
    assert request.prompt.startswith("[[hold g]]")
    assert not task.done()
    gate.set()
    _, events = await task
    assert types(events)[-1] == "response.completed"


def test_wait_for_requests_times_out_with_a_clear_error(server: FakeOpenAIServer) -> None:
    with pytest.raises(TimeoutError, match="expected 1 model requests, got 0"):
        server.wait_for_requests(1, timeout=0.01)


def test_stop_releases_held_streams() -> None:
    server = FakeOpenAIServer().start()
    server.hold("never")

    result: list[Any] = []

    def client() -> None:
        try:
            result.append(post(server, body(user("[[hold never]]"))))
        except http.client.HTTPException as exc:
            result.append(exc)

    t = threading.Thread(target=client)
    t.start()
    server.wait_for_requests(1)
    server.stop()
    t.join(5)
    assert not t.is_alive()
    assert isinstance(result[0], http.client.IncompleteRead)
