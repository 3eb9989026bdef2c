"""The fake Chat Completions server on its own: SSE chunks, directives, tool calls, errors, cuts and recording."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest

from adaptor_nb.testing import ChatReply, ChatToolCall, FakeChatCompletionsServer


@pytest.fixture
def server() -> Iterator[FakeChatCompletionsServer]:
    with FakeChatCompletionsServer() as s:
        yield s


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": f"<user_query>{text}</user_query>"}]}


def post(
    server: FakeChatCompletionsServer, messages: list[dict[str, Any]], headers: dict[str, str] | None = None
) -> tuple[int, list[Any], bool]:
    """POST a chat request; returns the status, the parsed ``data:`` payloads (or the JSON body) and whether
    the stream ended with ``[DONE]``."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    body = {"model": "m1", "messages": messages, "stream": True}
    sent = {"Content-Type": "application/json", "Authorization": "Bearer sk-secret", "X-User-Id": "anonymous_sk-secret"}
    conn.request("POST", "/chat/completions", json.dumps(body), {**sent, **(headers or {})})
    try:
        resp = conn.getresponse()
        try:
            raw = resp.read().decode()
        except http.client.IncompleteRead as exc:
            raw = exc.partial.decode()
    finally:
        conn.close()
    if resp.getheader("Content-Type") != "text/event-stream":
        return resp.status, [json.loads(raw)], False
    datas = [line[6:] for line in raw.splitlines() if line.startswith("data: ")]
    done = bool(datas) and datas[-1] == "[DONE]"
    return resp.status, [json.loads(d) for d in datas if d != "[DONE]"], done


def deltas(chunks: list[Any], key: str) -> str:
    return "".join(str(c["choices"][0]["delta"].get(key, "")) for c in chunks if c["choices"])


def test_text_and_reasoning_stream_then_usage_and_done(server: FakeChatCompletionsServer) -> None:
    status, chunks, done = post(server, [user("[[think let me see]] [[say hello there world]]")])
    assert status == 200 and done
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert deltas(chunks, "reasoning_content") == "let me see"
    assert deltas(chunks, "content") == "hello there world"
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] == 25


def test_several_tool_calls_with_streamed_arguments(server: FakeChatCompletionsServer) -> None:
    bash = ChatToolCall("Bash", '{"command": "echo one"}', pieces=3)
    server.enqueue(ChatReply.tool_calls(bash, ChatToolCall("Read")))
    _, chunks, done = post(server, [user("go")])
    calls: dict[int, dict[str, str]] = {}
    for c in chunks:
        for tc in (c["choices"][0]["delta"].get("tool_calls") or []) if c["choices"] else []:
            slot = calls.setdefault(tc["index"], {"id": "", "name": "", "args": ""})
            slot["id"] = tc.get("id", slot["id"])
            slot["name"] = tc.get("function", {}).get("name", slot["name"])
            slot["args"] += tc["function"].get("arguments", "")
    assert done and [calls[i]["name"] for i in sorted(calls)] == ["Bash", "Read"]
    assert json.loads(calls[0]["args"]) == {"command": "echo one"} and calls[1]["args"] == "{}"
    assert calls[0]["id"] != calls[1]["id"]
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "tool_calls"


def test_tool_directive_then_answer_after_tool_result(server: FakeChatCompletionsServer) -> None:
    _, chunks, _ = post(server, [user('[[tool Bash {"command": "ls"}]]')])
    assert "tool_calls" in json.dumps(chunks)
    tool_msg = {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"}
    _, chunks, _ = post(server, [user("x"), {"role": "assistant", "content": ""}, tool_msg])
    assert deltas(chunks, "content") == "Done. Last tool output: a.txt"


@pytest.mark.parametrize("status", [400, 429, 500, 503])
def test_http_errors_carry_an_openai_error_body(server: FakeChatCompletionsServer, status: int) -> None:
    got, body, _ = post(server, [user(f"[[status {status}]]")])
    assert got == status and body[0]["error"]["message"] == f"fake failure {status}"


def test_cut_stream_has_no_finish_usage_or_done(server: FakeChatCompletionsServer) -> None:
    _, chunks, done = post(server, [user("[[cut half an ans]]")])
    assert not done and deltas(chunks, "content") == "half an ans"
    assert all(c["choices"] and c["choices"][0]["finish_reason"] is None for c in chunks)


def test_slow_stream_still_completes(server: FakeChatCompletionsServer) -> None:
    server.enqueue(ChatReply.text("one two three", words_per_delta=1, delay=0.01))
    _, chunks, done = post(server, [user("x")])
    assert done and deltas(chunks, "content") == "one two three"


def test_classifier_is_answered_and_not_a_model_request(server: FakeChatCompletionsServer) -> None:
    server.enqueue(ChatReply.text("queued"))
    _, chunks, _ = post(server, [user("is this safe")], {"X-Agent-Purpose": "auto_mode_classifier"})
    assert deltas(chunks, "content") == "<block>no</block>"
    _, chunks, _ = post(server, [user("hi")], {"X-Agent-Purpose": "conversation"})
    assert deltas(chunks, "content") == "queued"
    assert len(server.requests) == 2 and [r.prompt for r in server.model_requests] == ["hi"]


def test_requests_are_recorded_with_secrets_redacted(server: FakeChatCompletionsServer) -> None:
    post(server, [{"role": "system", "content": "sys"}, user("[[say a]]")])
    (req,) = server.wait_for_requests(1)
    assert req.has_auth and req.prompt == "[[say a]]" and req.model == "m1" and req.texts("system") == ["sys"]
    assert req.headers["authorization"] == "<redacted>" and req.headers["x-user-id"] == "<redacted>"
    assert "sk-secret" not in repr(req) and "sk-secret" not in json.dumps(req.headers)
