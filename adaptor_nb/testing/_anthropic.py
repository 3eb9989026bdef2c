"""A scriptable Anthropic Messages server on 127.0.0.1 that streams SSE replies and records every request.

Point Claude Code at it with ``ANTHROPIC_BASE_URL=server.url``. Replies come, in this order, from the queue filled by
``server.enqueue(...)``, from ``server.responder`` (a function of the request), or from directives written in the
prompt itself:

``[[say TEXT]]``            final answer text (default "Hello from mock", or "Done. Last tool output: ..." after tools)
``[[think TEXT]]``          a thinking block before the final answer
``[[tool NAME {json}]]``    one tool call per model step, in order; the final answer follows the last tool result
``[[structured {json}]]``   a ``StructuredOutput`` tool call (what ``--json-schema`` asks for)
``[[status CODE]]``         an HTTP error with an Anthropic error body (400, 429, 500, 529, ...)
``[[slow N [SECONDS]]]``    stream the final text in N chunks, SECONDS apart (default 0.2)
``[[sleep SECONDS]]``       wait before answering
``[[big BYTES]]``           a final text of that many bytes
``[[cut]]``                 close the connection in the middle of the final text
``[[nostop]]``              leave out ``message_stop`` (the body still ends)
"""

from __future__ import annotations

import base64
import json
import re
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

from ._scripted_http import OwnedServer, ScriptedHTTPServer

__all__ = ["FakeAnthropicServer", "RecordedRequest", "Reply", "TextBlock", "ThinkingBlock", "ToolUseBlock"]

DEFAULT_TEXT = "Hello from mock"
_DIRECTIVE = re.compile(r"\[\[(say|think|tool|structured|status|slow|sleep|big|cut|nostop)\b")
_REMINDER = "<system-reminder>"


@dataclass(frozen=True)
class TextBlock:
    """Assistant text, streamed in ``chunks`` deltas."""

    text: str
    chunks: int = 1


@dataclass(frozen=True)
class ThinkingBlock:
    """A thinking block with a signature, streamed in ``chunks`` deltas."""

    text: str
    chunks: int = 1
    signature: str = "sig-fake"


@dataclass(frozen=True)
class ToolUseBlock:
    """A tool call whose JSON input is streamed in ``chunks`` ``input_json_delta`` fragments."""

    name: str
    input: dict[str, Any]
    id: str = ""
    chunks: int = 2


Block = TextBlock | ThinkingBlock | ToolUseBlock


@dataclass(frozen=True)
class Reply:
    """One scripted model response: content blocks streamed as SSE, or an HTTP error.

    ``delay`` waits before the headers, ``chunk_delay`` between deltas; ``hold`` (a ``threading.Event``) pauses the
    stream after the first delta until it is set; ``cut_after`` closes the connection after that many SSE events.
    """

    blocks: tuple[Block, ...] = ()
    stop_reason: str = ""
    status: int = 200
    error_type: str = ""
    error_message: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    chunk_delay: float = 0.0
    hold: threading.Event | None = None
    cut_after: int | None = None
    message_stop: bool = True
    input_tokens: int = 12
    output_tokens: int = 5
    cache_read_tokens: int = 0
    model: str = ""

    @classmethod
    def text(cls, text: str, **kw: Any) -> Reply:
        """A plain text answer."""
        return cls(blocks=(TextBlock(text, chunks=kw.pop("chunks", 1)),), **kw)

    @classmethod
    def tool(cls, name: str, input: dict[str, Any], *, id: str = "", text: str = "", **kw: Any) -> Reply:
        """A tool call (optionally preceded by text); the CLI runs it and asks again."""
        blocks: tuple[Block, ...] = (ToolUseBlock(name, input, id=id),)
        if text:
            blocks = (TextBlock(text), *blocks)
        return cls(blocks=blocks, **kw)

    @classmethod
    def structured(cls, value: dict[str, Any], **kw: Any) -> Reply:
        """A ``StructuredOutput`` tool call carrying ``value``."""
        return cls.tool("StructuredOutput", value, **kw)

    @classmethod
    def error(cls, status: int, message: str = "", *, error_type: str = "", **kw: Any) -> Reply:
        """An HTTP error with the Anthropic error body."""
        return cls(status=status, error_type=error_type or _error_type(status), error_message=message, **kw)


def _error_type(status: int) -> str:
    return {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }.get(status, "api_error")


@dataclass
class RecordedRequest:
    """An HTTP request the server received, with its JSON body decoded."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    time: float = field(default_factory=time.time)

    @property
    def messages(self) -> list[dict[str, Any]]:
        body = self.body if isinstance(self.body, dict) else {}
        msgs = body.get("messages")
        return msgs if isinstance(msgs, list) else []

    @property
    def model(self) -> str:
        return str(self.body.get("model", "")) if isinstance(self.body, dict) else ""

    @property
    def tool_names(self) -> list[str]:
        body = self.body if isinstance(self.body, dict) else {}
        return [str(t.get("name", "")) for t in body.get("tools") or [] if isinstance(t, dict)]

    def tool(self, name: str) -> dict[str, Any] | None:
        """The declaration of tool ``name`` in this request, if offered."""
        body = self.body if isinstance(self.body, dict) else {}
        for t in body.get("tools") or []:
            if isinstance(t, dict) and t.get("name") == name:
                return t
        return None

    @property
    def system_text(self) -> str:
        body = self.body if isinstance(self.body, dict) else {}
        system = body.get("system")
        if isinstance(system, str):
            return system
        if isinstance(system, list):
            return "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
        return ""

    @property
    def prompt(self) -> str:
        """The last text block of the newest user message that is not only tool results (reminders left out)."""
        idx = _prompt_index(self.messages)
        return _user_text(self.messages[idx]) if idx >= 0 else ""

    @property
    def prompt_images(self) -> list[tuple[str, bytes]]:
        """The images of the prompt's user message as ``(media_type, bytes)``, in order (base64 blocks decoded)."""
        idx = _prompt_index(self.messages)
        content = self.messages[idx].get("content") if idx >= 0 else None
        out: list[tuple[str, bytes]] = []
        for b in content if isinstance(content, list) else []:
            source = b.get("source") if isinstance(b, dict) and b.get("type") == "image" else None
            if isinstance(source, dict) and source.get("type") == "base64":
                out.append((str(source.get("media_type", "")), base64.b64decode(str(source.get("data", "")))))
        return out

    @property
    def tool_results(self) -> list[dict[str, Any]]:
        """The tool_result blocks sent after the prompt, oldest first."""
        msgs = self.messages
        out: list[dict[str, Any]] = []
        for m in msgs[_prompt_index(msgs) + 1 :]:
            if m.get("role") == "user" and isinstance(m.get("content"), list):
                out.extend(b for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
        return out

    def text_of_all_messages(self) -> str:
        """Every text in the conversation joined (handy for 'did the model see X' assertions)."""
        parts: list[str] = []
        for m in self.messages:
            content = m.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                for b in content:
                    if isinstance(b, dict):
                        if isinstance(b.get("text"), str):
                            parts.append(b["text"])
                        elif b.get("type") == "tool_result":
                            parts.append(_block_text(b.get("content")))
        return "\n".join(parts)


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _user_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [
        str(b.get("text", ""))
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and not str(b.get("text", "")).startswith(_REMINDER)
    ]
    return texts[-1] if texts else ""


def _prompt_index(messages: list[dict[str, Any]]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, str):
            return i
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "text" for b in content):
            return i
    return -1


# --- directives ---------------------------------------------------------------------------------------------


def _parse_directives(text: str) -> list[tuple[str, Any]]:
    """Directives in order of appearance: (name, argument)."""
    out: list[tuple[str, Any]] = []
    pos = 0
    decoder = json.JSONDecoder()
    while True:
        m = _DIRECTIVE.search(text, pos)
        if m is None:
            return out
        name = m.group(1)
        i = m.end()
        if name in ("tool", "structured"):
            rest = text[i:].lstrip()
            start = len(text) - len(rest)
            tool_name = "StructuredOutput"
            if name == "tool":
                sp = rest.find(" ")
                if sp < 0:
                    pos = i
                    continue
                tool_name = rest[:sp]
                start += sp + 1
            try:
                value, end = decoder.raw_decode(text, start)
            except ValueError:
                pos = i
                continue
            close = text.find("]]", end)
            pos = close + 2 if close >= 0 else end
            out.append(("tool", (tool_name, value)))
            continue
        close = text.find("]]", i)
        if close < 0:
            return out
        out.append((name, text[i:close].strip()))
        pos = close + 2


def _directive_reply(req: RecordedRequest) -> Reply:
    directives = _parse_directives(req.prompt)
    args: dict[str, Any] = {}
    tools: list[tuple[str, Any]] = []
    for name, arg in directives:
        if name == "tool":
            tools.append(arg)
        else:
            args.setdefault(name, arg)
    if "sleep" in args:
        time.sleep(float(args["sleep"] or 0))
    if "status" in args:
        status = int(str(args["status"]).split()[0])
        return Reply.error(status, f"mock error {status}")
    results = req.tool_results
    step = len(results)
    if step < len(tools):
        tool_name, tool_input = tools[step]
        return Reply.tool(tool_name, tool_input if isinstance(tool_input, dict) else {"value": tool_input})
    if "say" in args:
        text = str(args["say"])
    elif "big" in args:
        text = "x" * int(args["big"])
    elif results:
        text = "Done. Last tool output: " + _block_text(results[-1].get("content"))
    else:
        text = DEFAULT_TEXT
    blocks: list[Block] = []
    if "think" in args:
        blocks.append(ThinkingBlock(str(args["think"]), chunks=2))
    chunks = 1
    chunk_delay = 0.0
    if "slow" in args:
        parts = str(args["slow"]).split()
        chunks = int(parts[0]) if parts and parts[0] else 5
        chunk_delay = float(parts[1]) if len(parts) > 1 else 0.2
        text = "".join(f"{text} ({i})" for i in range(chunks))
    blocks.append(TextBlock(text, chunks=chunks))
    cut_after = 3 + (4 if "think" in args else 0) if "cut" in args else None
    return Reply(
        blocks=tuple(blocks),
        chunk_delay=chunk_delay,
        cut_after=cut_after,
        message_stop="nostop" not in args,
    )


# --- SSE ------------------------------------------------------------------------------------------------------


def _split(text: str, n: int) -> list[str]:
    n = max(1, min(n, len(text) or 1))
    size = -(-len(text) // n) if text else 0
    return [text[i : i + size] for i in range(0, len(text), size)] if text else [""]


def _sse_events(reply: Reply, model: str) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """(event name, data, is_delta) in stream order."""
    msg_id = "msg_" + uuid.uuid4().hex[:20]
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": reply.model or model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": reply.input_tokens,
                    "output_tokens": 0,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": reply.cache_read_tokens,
                },
            },
        },
        False,
    )
    has_tool = False
    for index, block in enumerate(reply.blocks):
        if isinstance(block, TextBlock):
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": part} for part in _split(block.text, block.chunks)]
        elif isinstance(block, ThinkingBlock):
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": part} for part in _split(block.text, block.chunks)]
            deltas.append({"type": "signature_delta", "signature": block.signature})
        else:
            has_tool = True
            tool_id = block.id or "toolu_" + uuid.uuid4().hex[:20]
            start = {"type": "tool_use", "id": tool_id, "name": block.name, "input": {}}
            raw = json.dumps(block.input)
            deltas = [{"type": "input_json_delta", "partial_json": part} for part in _split(raw, block.chunks)]
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}, False
        for d in deltas:
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}, True
        yield "content_block_stop", {"type": "content_block_stop", "index": index}, False
    stop_reason = reply.stop_reason or ("tool_use" if has_tool else "end_turn")
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": reply.output_tokens},
        },
        False,
    )
    if reply.message_stop:
        yield "message_stop", {"type": "message_stop"}, False


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: OwnedServer

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet; requests are recorded instead."""

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, True)

    def finish(self) -> None:
        self.server.owner._track(self.connection, False)
        try:
            super().finish()
        except OSError:
            pass

    def _abort(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _read_body(self) -> Any:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _record(self, body: Any) -> RecordedRequest:
        headers = {k.lower(): v for k, v in self.headers.items()}
        req = RecordedRequest(self.command, self.path, headers, body)
        self.server.owner._record(req)
        return req

    def _send_json(self, status: int, obj: Any, extra: tuple[tuple[str, str], ...] = ()) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_HEAD(self) -> None:
        self._record(None)
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._record(None)
        if self.path.startswith("/v1/models"):
            models = [
                {"type": "model", "id": m, "display_name": m, "created_at": "2026-01-01T00:00:00Z"}
                for m in self.server.owner.models
            ]
            self._send_json(200, {"data": models, "has_more": False, "first_id": None, "last_id": None})
            return
        self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

    def do_POST(self) -> None:
        body = self._read_body()
        req = self._record(body)
        if "/count_tokens" in self.path:
            self._send_json(200, {"input_tokens": 12})
            return
        if not self.path.startswith("/v1/messages"):
            self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})
            return
        reply = self.server.owner._next_reply(req)
        owner = self.server.owner
        if reply.delay and owner._stopping.wait(reply.delay):
            self._abort()
            return
        if reply.status != 200:
            err = {"type": "error", "error": {"type": reply.error_type, "message": reply.error_message}}
            self._send_json(reply.status, err, reply.headers)
            return
        self._stream(reply, req.model or "claude-fake")

    def _stream(self, reply: Reply, model: str) -> None:
        owner = self.server.owner
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", "req_" + uuid.uuid4().hex[:16])
        for k, v in reply.headers:
            self.send_header(k, v)
        self.end_headers()
        held = False
        try:
            for count, (name, data, is_delta) in enumerate(_sse_events(reply, model), start=1):
                payload = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))
                self.wfile.flush()
                if reply.cut_after is not None and count >= reply.cut_after:
                    self._abort()
                    return
                if is_delta:
                    if reply.hold is not None and not held:
                        held = True
                        while not reply.hold.wait(0.05):
                            if owner._stopping.is_set():
                                self._abort()
                                return
                    if reply.chunk_delay and owner._stopping.wait(reply.chunk_delay):
                        self._abort()
                        return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True


_Reply = Reply


class FakeAnthropicServer(ScriptedHTTPServer[Reply, RecordedRequest]):
    """A local Anthropic Messages API for tests and offline notebooks; use it as a (sync or async) context manager.

    Example::

        with FakeAnthropicServer() as server:
            server.enqueue(FakeAnthropicServer.Reply.text("hi"))
            env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-test"}

    ``url`` is the base URL to put in ``ANTHROPIC_BASE_URL``.
    """

    Reply: ClassVar[type[_Reply]] = _Reply
    handler = _Handler

    def __init__(self, *, models: tuple[str, ...] = ("claude-fake-1", "claude-fake-2")) -> None:
        super().__init__()
        self.models = models

    def _fallback_reply(self, request: RecordedRequest) -> _Reply:
        return _directive_reply(request)

    def _is_model_request(self, request: RecordedRequest) -> bool:
        return request.method == "POST" and request.path.startswith("/v1/messages")

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """The model requests (``POST /v1/messages``) received so far."""
        return self.model_requests
