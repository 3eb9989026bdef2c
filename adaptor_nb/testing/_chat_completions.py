"""A scriptable OpenAI Chat Completions server on 127.0.0.1 that streams SSE chunks and records every request.

Point CodeBuddy Code at it with ``CODEBUDDY_BASE_URL=server.url`` (the CLI posts to ``{base}/chat/completions``).
Replies come, in this order, from the queue filled by ``server.enqueue(...)``, from ``server.responder`` (a
function of the request), or from directives written in the newest user text:

``[[say TEXT]]``          the answer text (default "ok"; "Done. Last tool output: ..." right after a tool result)
``[[think TEXT]]``        ``reasoning_content`` before the answer
``[[tool NAME {json}]]``  a tool call (several ``[[tool ...]]`` directives make several calls in one step)
``[[json {json}]]``       the answer is that JSON
``[[status CODE]]``       an HTTP error with an OpenAI error body
``[[cut TEXT]]``          stream TEXT and close the body without ``finish_reason``, usage or ``[DONE]``
``[[hold NAME]]``         pause after the first chunk until ``server.hold(NAME).set()``

Requests whose ``X-Agent-Purpose`` is ``auto_mode_classifier`` are answered ``<block>no</block>`` (allow) unless
``server.classifier_verdict`` says otherwise; they are recorded but are not model requests.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

from ._scripted_http import OwnedServer, ScriptedHTTPServer

__all__ = ["ChatReply", "ChatRequest", "ChatToolCall", "FakeChatCompletionsServer"]

DEFAULT_TEXT = "ok"
_DIRECTIVE = re.compile(r"\[\[(say|think|tool|json|status|cut|hold)(?:\s(.*?))?\]\]", re.DOTALL)
_QUERY = re.compile(r"<user_query>(.*?)</user_query>", re.DOTALL)
_SECRET_HEADERS = ("authorization", "x-api-key", "api-key", "x-user-id")
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error"}


@dataclass(frozen=True)
class ChatToolCall:
    """One tool call of a reply; ``arguments`` is streamed in ``pieces`` fragments."""

    name: str
    arguments: str = "{}"
    call_id: str = ""
    pieces: int = 2


@dataclass(frozen=True)
class ChatReply:
    """One scripted model response: reasoning, text and/or tool calls, or an HTTP error.

    ``cut=True`` closes the body after the content without ``finish_reason``, usage or ``[DONE]``; ``hold``
    pauses after the first ``hold_after`` chunks (1: only the role chunk) until the event is set; ``delay`` sleeps
    between chunks (a slow stream);
    ``usage`` is (prompt, completion) tokens.
    """

    answer: str | None = None
    reasoning: str | None = None
    tools: tuple[ChatToolCall, ...] = ()
    status: int = 200
    error_message: str = ""
    cut: bool = False
    hold: threading.Event | None = None
    hold_after: int = 1
    delay: float = 0.0
    usage: tuple[int, int] = (20, 5)
    words_per_delta: int = 4

    @classmethod
    def text(cls, text: str, **kw: Any) -> ChatReply:
        """Stream ``text`` as the answer (``reasoning=`` adds reasoning content first)."""
        return cls(answer=text, **kw)

    @classmethod
    def json(cls, value: Any, **kw: Any) -> ChatReply:
        """Answer with ``value`` serialized as JSON."""
        return cls(answer=json.dumps(value), **kw)

    @classmethod
    def tool(cls, name: str, arguments: dict[str, Any] | str, *, call_id: str = "", **kw: Any) -> ChatReply:
        """Call one tool such as ``Bash`` with ``arguments``."""
        args = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return cls(tools=(ChatToolCall(name, args, call_id),), **kw)

    @classmethod
    def tool_calls(cls, *calls: ChatToolCall, **kw: Any) -> ChatReply:
        """Call several tools in one step."""
        return cls(tools=calls, **kw)

    @classmethod
    def error(cls, status: int = 500, message: str = "fake server error") -> ChatReply:
        """Fail the request with an HTTP error and an OpenAI error body."""
        return cls(status=status, error_message=message)


@dataclass(frozen=True)
class ChatRequest:
    """One HTTP request the fake received; secrets in headers are redacted, ``body`` is the parsed JSON."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    has_auth: bool = False
    raw: bytes = field(default=b"", repr=False)

    @property
    def purpose(self) -> str:
        return self.headers.get("x-agent-purpose", "")

    @property
    def is_chat(self) -> bool:
        return self.method == "POST" and self.path.rstrip("/").endswith("/chat/completions")

    @property
    def is_model_request(self) -> bool:
        """A conversation request (not the auto-mode classifier or a title request)."""
        return self.is_chat and self.purpose in ("", "conversation")

    @property
    def model(self) -> str:
        return str(self.body.get("model", "")) if isinstance(self.body, dict) else ""

    @property
    def messages(self) -> list[dict[str, Any]]:
        items = self.body.get("messages") if isinstance(self.body, dict) else None
        return [m for m in items if isinstance(m, dict)] if isinstance(items, list) else []

    def texts(self, role: str) -> list[str]:
        """The text of every ``role`` message, in order (content blocks joined)."""
        out: list[str] = []
        for msg in self.messages:
            if msg.get("role") != role:
                continue
            content = msg.get("content")
            if isinstance(content, str):
                out.append(content)
            elif isinstance(content, list):
                out.append("".join(str(p.get("text", "")) for p in content if isinstance(p, dict)))
        return out

    def user_queries(self) -> list[str]:
        """The user prompts, unwrapped from the CLI's ``<user_query>`` tags (system reminders left out)."""
        out: list[str] = []
        for text in self.texts("user"):
            found = _QUERY.findall(text)
            out.extend(found if found else [text])
        return out

    @property
    def prompt(self) -> str:
        """The newest user prompt."""
        queries = self.user_queries()
        return queries[-1] if queries else ""

    @property
    def prompt_images(self) -> list[tuple[str, bytes]]:
        """The ``data:`` URL images of the newest user message that carries a text part, as
        ``(media_type, bytes)`` in order."""
        for msg in reversed(self.messages):
            content = msg.get("content")
            if msg.get("role") != "user" or not isinstance(content, list):
                continue
            parts = [p for p in content if isinstance(p, dict)]
            if not any(p.get("type") == "text" for p in parts):
                continue
            out: list[tuple[str, bytes]] = []
            for part in parts:
                image = part.get("image_url") if part.get("type") == "image_url" else None
                url = str(image.get("url", "")) if isinstance(image, dict) else ""
                head, _, data = url.partition(";base64,")
                if head.startswith("data:") and data:
                    out.append((head[len("data:") :], base64.b64decode(data)))
            return out
        return []

    @property
    def tool_outputs(self) -> list[str]:
        """Contents of the ``tool`` messages, in order."""
        return [str(m.get("content", "")) for m in self.messages if m.get("role") == "tool"]

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        if not isinstance(tools, list):
            return []
        return [str((t.get("function") or {}).get("name", "")) for t in tools if isinstance(t, dict)]


def _directive_reply(request: ChatRequest, server: FakeChatCompletionsServer) -> ChatReply:
    messages = request.messages
    if messages and messages[-1].get("role") == "tool":
        outputs = request.tool_outputs
        return ChatReply(answer=f"Done. Last tool output: {outputs[-1] if outputs else ''}")
    reasoning: str | None = None
    hold: threading.Event | None = None
    tools: list[ChatToolCall] = []
    for match in _DIRECTIVE.finditer(request.prompt):
        verb, arg = match.group(1), match.group(2) or ""
        if verb == "think":
            reasoning = arg
        elif verb == "hold":
            hold = server.hold(arg.strip())
        elif verb == "tool":
            name, _, rest = arg.strip().partition(" ")
            tools.append(ChatToolCall(name, rest.strip() or "{}"))
        elif verb in ("say", "json"):
            return ChatReply(answer=arg.strip() if verb == "json" else arg, reasoning=reasoning, hold=hold)
        elif verb == "cut":
            return ChatReply(answer=arg, cut=True, reasoning=reasoning, hold=hold)
        elif verb == "status":
            return ChatReply.error(int(arg.strip() or "500"), f"fake failure {arg.strip() or '500'}")
    if tools:
        return ChatReply(tools=tuple(tools), reasoning=reasoning, hold=hold)
    return ChatReply(answer=server.default_text, reasoning=reasoning, hold=hold)


def _pieces(text: str, n: int) -> list[str]:
    words = re.findall(r"\S+\s*|\s+", text)
    n = max(1, n)
    return ["".join(words[i : i + n]) for i in range(0, len(words), n)] or [text]


def _split(text: str, parts: int) -> list[str]:
    parts = max(1, min(parts, len(text) or 1))
    size = -(-len(text) // parts) if text else 1
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def sse_chunks(reply: ChatReply, model: str, completion_id: str, call_ids: Iterator[str]) -> Iterator[bytes]:
    """The ``data:`` lines of one streamed reply, ending with ``[DONE]`` unless the reply is cut."""
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        data = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [choice]}  # fmt: skip
        return f"data: {json.dumps(data)}\n\n".encode()

    yield chunk({"role": "assistant", "content": ""})
    if reply.reasoning is not None:
        for piece in _pieces(reply.reasoning, reply.words_per_delta):
            yield chunk({"reasoning_content": piece})
    if reply.answer is not None:
        for piece in _pieces(reply.answer, reply.words_per_delta):
            yield chunk({"content": piece})
    for index, call in enumerate(reply.tools):
        call_id = call.call_id or next(call_ids)
        head = {"index": index, "id": call_id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        yield chunk({"tool_calls": [head]})
        for piece in _split(call.arguments, call.pieces):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    if reply.cut:
        return
    yield chunk({}, "tool_calls" if reply.tools else "stop")
    prompt, completion = reply.usage
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    data = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [], "usage": usage}  # fmt: skip
    yield f"data: {json.dumps(data)}\n\n".encode()
    yield b"data: [DONE]\n\n"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: OwnedServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._record(b"")
        self._send_json(404, {"error": {"message": f"no route for GET {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = self._record(self.rfile.read(length) if length else b"")
        owner: FakeChatCompletionsServer = self.server.owner
        if not request.is_chat:
            self._send_json(404, {"error": {"message": f"no route for POST {self.path}", "type": "not_found"}})
            return
        if request.purpose == "auto_mode_classifier":
            reply = ChatReply(answer=owner.classifier_verdict)
        elif not request.is_model_request:
            reply = ChatReply(answer="Untitled")
        else:
            reply = owner._next_reply(request)
        if reply.status != 200:
            kind = _ERROR_TYPES.get(reply.status, "server_error")
            self._send_json(reply.status, {"error": {"message": reply.error_message, "type": kind, "code": None}})
            return
        try:
            self._stream(reply, request, owner)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _record(self, raw: bytes) -> ChatRequest:
        headers = {k.lower(): v for k, v in self.headers.items()}
        has_auth = "authorization" in headers or "x-api-key" in headers
        for secret in _SECRET_HEADERS:
            if secret in headers:
                headers[secret] = "<redacted>"
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = ChatRequest(self.command, self.path, headers, body, has_auth, raw)
        self.server.owner._record(request)
        return request

    def _send_json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _stream(self, reply: ChatReply, request: ChatRequest, owner: FakeChatCompletionsServer) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunks = sse_chunks(reply, request.model or "fake-model", owner._next_id("chatcmpl"), owner._call_ids())
        for data in itertools.islice(chunks, max(1, reply.hold_after)):
            self._chunk(data)
        if reply.hold is not None:
            while not reply.hold.wait(0.05):
                if owner._stopping.is_set():
                    self.close_connection = True
                    return
        for data in chunks:
            if reply.delay:
                owner._stopping.wait(reply.delay)
            self._chunk(data)
        if reply.cut:
            self.close_connection = True
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class FakeChatCompletionsServer(ScriptedHTTPServer[ChatReply, ChatRequest]):
    """A local OpenAI Chat Completions API for tests and offline notebooks; a (sync or async) context manager.

    Example::

        with FakeChatCompletionsServer() as server:
            server.enqueue(FakeChatCompletionsServer.Reply.text("hi"))
            # env: CODEBUDDY_BASE_URL=server.url, CODEBUDDY_API_KEY=...
    """

    Reply: ClassVar[type[ChatReply]] = ChatReply
    handler = _Handler

    def __init__(self, *, default_text: str = DEFAULT_TEXT, classifier_verdict: str = "<block>no</block>") -> None:
        super().__init__()
        self.default_text = default_text
        self.classifier_verdict = classifier_verdict
        self._ids = itertools.count(1)

    @property
    def base_url(self) -> str:
        """The base URL clients append ``/chat/completions`` to (the server root)."""
        return self.url

    def _fallback_reply(self, request: ChatRequest) -> ChatReply:
        return _directive_reply(request, self)

    def _is_model_request(self, request: ChatRequest) -> bool:
        return request.is_model_request

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    def _call_ids(self) -> Iterator[str]:
        while True:
            yield self._next_id("call")
