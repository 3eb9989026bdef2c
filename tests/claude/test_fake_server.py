"""The fake Anthropic Messages server on its own: SSE framing, scripting, errors, cut-offs and recording."""

from __future__ import annotations

import http.client
import json
import threading
from typing import Any

import pytest

from adaptor_nb.testing import FakeAnthropicServer
from adaptor_nb.testing._anthropic import Reply, TextBlock, ThinkingBlock, ToolUseBlock


def post(server: FakeAnthropicServer, messages: list[dict[str, Any]], timeout: float = 10) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    body = json.dumps({"model": "claude-x", "messages": messages, "stream": True})
    conn.request("POST", "/v1/messages?beta=true", body, {"content-type": "application/json", "x-api-key": "k"})
    resp = conn.getresponse()
    try:
        return resp.status, resp.read()
    finally:
        conn.close()


def sse(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "text", "text": text}]}]


def test_a_text_reply_is_a_complete_sse_stream() -> None:
    with FakeAnthropicServer() as server:
        server.enqueue(Reply(blocks=(ThinkingBlock("hmm", chunks=2), TextBlock("hello world", chunks=3))))
        status, raw = post(server, user("hi"))
    events = sse(raw)
    names = [e for e, _ in events]
    assert status == 200
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    text = "".join(d["delta"].get("text", "") for e, d in events if e == "content_block_delta")
    thinking = "".join(d["delta"].get("thinking", "") for e, d in events if e == "content_block_delta")
    assert text == "hello world" and thinking == "hmm"
    assert any(d["delta"].get("type") == "signature_delta" for e, d in events if e == "content_block_delta")
    assert events[-2][1]["delta"]["stop_reason"] == "end_turn"


def test_tool_use_input_is_streamed_as_json_fragments() -> None:
    with FakeAnthropicServer() as server:
        server.enqueue(Reply(blocks=(ToolUseBlock("Bash", {"command": "ls -la"}, id="toolu_1", chunks=4),)))
        _, raw = post(server, user("x"))
    events = sse(raw)
    start = next(d for e, d in events if e == "content_block_start")
    assert start["content_block"] == {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}
    parts = [d["delta"]["partial_json"] for e, d in events if e == "content_block_delta"]
    assert len(parts) > 1 and json.loads("".join(parts)) == {"command": "ls -la"}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


@pytest.mark.parametrize(
    ("status", "kind"),
    [(400, "invalid_request_error"), (429, "rate_limit_error"), (500, "api_error"), (529, "overloaded_error")],
)
def test_errors_have_the_status_and_an_anthropic_body(status: int, kind: str) -> None:
    with FakeAnthropicServer() as server:
        server.enqueue(Reply.error(status, "nope", headers=(("retry-after", "1"),)))
        got, raw = post(server, user("x"))
    assert got == status
    assert json.loads(raw) == {"type": "error", "error": {"type": kind, "message": "nope"}}


def test_a_cut_stream_ends_without_its_terminator() -> None:
    with FakeAnthropicServer() as server:
        server.enqueue(Reply.text("abcdef", chunks=3, cut_after=3))
        with pytest.raises(http.client.IncompleteRead):
            post(server, user("x"))


def test_without_message_stop_the_body_still_ends() -> None:
    with FakeAnthropicServer() as server:
        _, raw = post(server, user("x [[nostop]]"))
    assert [e for e, _ in sse(raw)][-1] == "message_delta"


def test_a_held_stream_waits_for_its_gate_and_stop_releases_it() -> None:
    gate = threading.Event()
    with FakeAnthropicServer() as server:
        server.enqueue(Reply.text("slow", chunks=2, hold=gate))
        got: list[bytes] = []
        t = threading.Thread(target=lambda: got.append(post(server, user("x"))[1]))
        t.start()
        server.wait_for_requests(1)
        t.join(0.2)
        assert t.is_alive()
        gate.set()
        t.join(5)
    assert got and b"message_stop" in got[0]
    held = FakeAnthropicServer().start()
    held.enqueue(Reply.text("never", chunks=2, hold=threading.Event()))
    errors: list[BaseException] = []

    def client() -> None:
        try:
            post(held, user("x"), timeout=10)
        except (http.client.HTTPException, OSError) as exc:
            errors.append(exc)

    t = threading.Thread(target=client, daemon=True)
    t.start()
    held.wait_for_requests(1)
    held.stop()  # must not hang on the held stream
    t.join(5)
    assert not t.is_alive()
    # the stream was cut, not completed (before or after the status line, depending on when stop() landed)
    assert errors and isinstance(errors[0], http.client.IncompleteRead | http.client.RemoteDisconnected)


def test_directives_drive_a_tool_loop_by_counting_results() -> None:
    prompt = 'go [[tool Read {"file_path": "/a"}]] [[tool Read {"file_path": "/b"}]] [[say finished]]'
    convo = user(prompt)
    with FakeAnthropicServer() as server:
        answers = []
        for i in range(3):
            _, raw = post(server, convo)
            events = sse(raw)
            answers.append(events)
            start = next(d["content_block"] for e, d in events if e == "content_block_start")
            if start["type"] == "tool_use":
                convo = [
                    *convo,
                    {"role": "assistant", "content": [start]},
                    {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": start["id"], "content": f"r{i}"}],
                    },
                ]
        reqs = server.message_requests
    firsts = [next(d["content_block"] for e, d in ev if e == "content_block_start") for ev in answers]
    assert [f["type"] for f in firsts] == ["tool_use", "tool_use", "text"]
    assert [len(r.tool_results) for r in reqs] == [0, 1, 2]
    assert all(r.prompt == prompt for r in reqs)
    assert "".join(d["delta"].get("text", "") for e, d in answers[2] if e == "content_block_delta") == "finished"


def test_requests_are_recorded_with_headers_and_body() -> None:
    with FakeAnthropicServer() as server:
        post(server, user("record me"))
        conn = http.client.HTTPConnection("127.0.0.1", server.port)
        conn.request("HEAD", "/")
        assert conn.getresponse().status == 200
        conn.close()
        [req] = server.message_requests
    assert req.headers["x-api-key"] == "k" and req.model == "claude-x"
    assert req.prompt == "record me"
    assert len(server.requests) == 2


def test_a_responder_and_the_queue_take_precedence_in_order() -> None:
    with FakeAnthropicServer() as server:
        server.responder = lambda req: Reply.text("from responder")
        server.enqueue(Reply.text("from queue"))
        first = sse(post(server, user("a"))[1])
        second = sse(post(server, user("b"))[1])
    text = lambda ev: "".join(d["delta"].get("text", "") for e, d in ev if e == "content_block_delta")  # noqa: E731
    assert (text(first), text(second)) == ("from queue", "from responder")
