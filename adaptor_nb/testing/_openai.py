"""A scriptable fake of the OpenAI Responses API (SSE) on 127.0.0.1, for driving the real Codex CLI offline.

Replies come from a queue (``server.queue(Reply.say("hi"), ...)``) or, when the queue is empty, from directives
in the newest user message: ``[[say TEXT]]``, ``[[think TEXT]]``, ``[[tool NAME {json}]]``, ``[[custom NAME INPUT]]``,
``[[json {json}]]``, ``[[status 500]]``, ``[[incomplete TEXT]]`` and ``[[hold NAME]]`` (waits for
``server.gate(NAME)``).
After a tool result the default reply is ``Done. Last tool output: <output>``. Every request is recorded.
"""

from __future__ import annotations

import asyncio
import gzip
import itertools
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["FakeOpenAIServer", "Gate", "RecordedRequest", "Reply", "ToolCallSpec"]

_DIRECTIVE = re.compile(r"\[\[(say|think|tool|custom|json|status|incomplete|hold)(?:\s(.*?))?\]\]", re.DOTALL)
_SYNTHETIC_USER_PREFIXES = ("<environment_context>", "<turn_aborted>", "<user_instructions>")


class Gate:
    """A one-shot latch a reply waits on before streaming its output; release it from any thread."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        self._event = threading.Event()

    def release(self) -> None:
        """Let every reply waiting on this gate continue."""
        self._event.set()

    @property
    def released(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)


@dataclass(frozen=True)
class ToolCallSpec:
    """A tool call the fake model makes: a JSON ``function_call`` or a free-text ``custom_tool_call``."""

    name: str
    arguments: str
    custom: bool = False
    call_id: str = ""


@dataclass(frozen=True)
class Reply:
    """One scripted model response: optional reasoning, then text or a tool call, or an HTTP error."""

    text: str | None = None
    reasoning: str | None = None
    tool: ToolCallSpec | None = None
    status: int = 200
    error_message: str = ""
    complete: bool = True
    gate: Gate | None = None
    usage: tuple[int, int, int] = (20, 5, 0)
    chunk_size: int = 4

    @classmethod
    def say(cls, text: str, *, reasoning: str | None = None, gate: Gate | None = None) -> Reply:
        """Stream ``text`` as assistant output (optionally after a reasoning summary)."""
        return cls(text=text, reasoning=reasoning, gate=gate)

    @classmethod
    def json(cls, value: Any, *, gate: Gate | None = None) -> Reply:
        """Answer with ``value`` serialized as JSON text."""
        return cls(text=json.dumps(value), gate=gate)

    @classmethod
    def function_call(
        cls, name: str, arguments: dict[str, Any] | str, *, call_id: str = "", gate: Gate | None = None
    ) -> Reply:
        """Call a JSON function tool such as ``exec_command``."""
        args = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return cls(tool=ToolCallSpec(name, args, call_id=call_id), gate=gate)

    @classmethod
    def exec_command(cls, cmd: str, *, gate: Gate | None = None, **params: Any) -> Reply:
        """Ask Codex to run ``cmd`` through its ``exec_command`` tool."""
        return cls.function_call("exec_command", {"cmd": cmd, **params}, gate=gate)

    @classmethod
    def apply_patch(cls, patch: str, *, gate: Gate | None = None) -> Reply:
        """Ask Codex to apply a patch through its free-text ``apply_patch`` tool."""
        return cls(tool=ToolCallSpec("apply_patch", patch, custom=True), gate=gate)

    @classmethod
    def error(cls, status: int = 500, message: str = "fake server error") -> Reply:
        """Fail the request with an HTTP error and an OpenAI-style error body."""
        return cls(status=status, error_message=message)

    @classmethod
    def incomplete(cls, text: str = "", *, gate: Gate | None = None) -> Reply:
        """Stream ``text`` and end the body without ``response.completed``."""
        return cls(text=text, complete=False, gate=gate)


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request the fake received; ``body`` is the parsed JSON (None if it was not JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    has_auth: bool = False
    raw: bytes = field(default=b"", repr=False)

    @property
    def model(self) -> str:
        return str(self.body.get("model", "")) if isinstance(self.body, dict) else ""

    @property
    def input_items(self) -> list[dict[str, Any]]:
        items = self.body.get("input") if isinstance(self.body, dict) else None
        return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []

    def texts(self, role: str) -> list[str]:
        """The text of every ``role`` message of the input, in order."""
        out: list[str] = []
        for item in self.input_items:
            if item.get("type", "message") != "message" or item.get("role") != role:
                continue
            content = item.get("content")
            if isinstance(content, str):
                out.append(content)
            elif isinstance(content, list):
                out.append("".join(str(p.get("text", "")) for p in content if isinstance(p, dict)))
        return out

    def user_texts(self) -> list[str]:
        """User messages without the CLI's synthetic context messages."""
        return [t for t in self.texts("user") if not t.startswith(_SYNTHETIC_USER_PREFIXES)]

    @property
    def last_user_text(self) -> str:
        texts = self.user_texts()
        return texts[-1] if texts else ""

    @property
    def tool_outputs(self) -> list[str]:
        out: list[str] = []
        for item in self.input_items:
            if item.get("type") in ("function_call_output", "custom_tool_call_output"):
                value = item.get("output")
                out.append(value if isinstance(value, str) else json.dumps(value))
        return out

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """The JSON schema of ``text.format`` when the client asked for structured output."""
        if not isinstance(self.body, dict):
            return None
        fmt = (self.body.get("text") or {}).get("format") or {}
        schema = fmt.get("schema") if fmt.get("type") == "json_schema" else None
        return schema if isinstance(schema, dict) else None

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        if not isinstance(tools, list):
            return []
        return [str(t.get("name") or t.get("type")) for t in tools if isinstance(t, dict)]


def example_for_schema(schema: Any) -> Any:
    """A small value that satisfies common JSON schemas (objects, arrays, enums, scalars)."""
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return example_for_schema(schema[key][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        required = schema.get("required", list(props))
        return {k: example_for_schema(v) for k, v in props.items() if k in required}
    if kind == "array":
        n = int(schema.get("minItems", 0))
        return [example_for_schema(schema.get("items", {})) for _ in range(n)]
    return {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "null": None}.get(str(kind), "x")


class _Script:
    """Turns a request into a Reply: the queue first, then a custom handler, then directives."""

    def __init__(self, server: FakeOpenAIServer) -> None:
        self.server = server

    def reply_for(self, request: RecordedRequest) -> list[Reply]:
        queued = self.server._pop_reply()
        if queued is not None:
            return [queued]
        if self.server.handler is not None:
            custom = self.server.handler(request)
            if custom is not None:
                return [custom]
        return self._from_directives(request)

    def _from_directives(self, request: RecordedRequest) -> list[Reply]:
        items = request.input_items
        last = items[-1] if items else {}
        if last.get("type") in ("function_call_output", "custom_tool_call_output"):
            outputs = request.tool_outputs
            return [Reply(text=f"Done. Last tool output: {outputs[-1] if outputs else ''}")]
        prompt = request.last_user_text
        reasoning: str | None = None
        gate: Gate | None = None
        for match in _DIRECTIVE.finditer(prompt):
            verb, arg = match.group(1), (match.group(2) or "")
            if verb == "think":
                reasoning = arg
            elif verb == "hold":
                gate = self.server.gate(arg.strip())
            elif verb == "say":
                return [Reply(text=arg, reasoning=reasoning, gate=gate)]
            elif verb == "json":
                return [Reply(text=arg.strip(), reasoning=reasoning, gate=gate)]
            elif verb == "incomplete":
                return [Reply(text=arg, complete=False, reasoning=reasoning, gate=gate)]
            elif verb == "status":
                return [Reply.error(int(arg.strip() or "500"))]
            elif verb in ("tool", "custom"):
                name, _, rest = arg.strip().partition(" ")
                spec = ToolCallSpec(name, rest if verb == "custom" else rest.strip() or "{}", custom=verb == "custom")
                return [Reply(tool=spec, reasoning=reasoning, gate=gate)]
        schema = request.output_schema
        if schema is not None:
            return [Reply(text=json.dumps(example_for_schema(schema)), reasoning=reasoning, gate=gate)]
        return [Reply(text=self.server.default_text, reasoning=reasoning, gate=gate)]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._record(b"")
        self._send_json(404, {"error": {"message": f"no route for GET {self.path}", "type": "not_found"}})

    def do_HEAD(self) -> None:
        self._record(b"")
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        request = self._record(raw)
        if not self.path.rstrip("/").endswith("/responses"):
            self._send_json(404, {"error": {"message": f"no route for POST {self.path}", "type": "not_found"}})
            return
        fake = self.server.fake
        for reply in _Script(fake).reply_for(request):
            if reply.status != 200:
                body = {"error": {"message": reply.error_message, "type": "server_error", "code": None}}
                self._send_json(reply.status, body)
                return
            try:
                self._stream(reply, request)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
            return

    def _record(self, raw: bytes) -> RecordedRequest:
        headers = {k.lower(): v for k, v in self.headers.items()}
        has_auth = "authorization" in headers or "api-key" in headers
        for secret in ("authorization", "api-key"):
            if secret in headers:
                headers[secret] = "<redacted>"
        data = raw
        if headers.get("content-encoding") == "gzip":
            try:
                data = gzip.decompress(raw)
            except OSError:
                data = b""
        try:
            body: Any = json.loads(data) if data else None
        except ValueError:
            body = None
        request = RecordedRequest(self.command, self.path, headers, body, has_auth, raw)
        self.server.fake._add_request(request)
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

    def _stream(self, reply: Reply, request: RecordedRequest) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        fake = self.server.fake
        events = _sse_events(reply, request.model or "gpt-fake", fake._next_id)
        first = next(events)
        self._chunk(first)
        if reply.gate is not None:
            while not reply.gate.wait(0.05):
                if fake._closing.is_set():
                    self.close_connection = True
                    return
        for event in events:
            self._chunk(event)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _sse_events(reply: Reply, model: str, next_id: Callable[[str], str]) -> Iterator[bytes]:
    """The SSE frames of one reply, in the order the Responses API sends them."""
    seq = itertools.count()
    response_id = next_id("resp")

    def frame(kind: str, **payload: Any) -> bytes:
        data = {"type": kind, "sequence_number": next(seq), **payload}
        return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()

    def pieces(text: str) -> list[str]:
        words = re.findall(r"\S+\s*|\s+", text) or [text]
        size = max(1, reply.chunk_size)
        return ["".join(words[i : i + size]) for i in range(0, len(words), size)] or [""]

    yield frame(
        "response.created",
        response={"id": response_id, "object": "response", "status": "in_progress", "model": model, "output": []},
    )
    output: list[dict[str, Any]] = []
    index = 0
    if reply.reasoning is not None:
        rid = next_id("rs")
        yield frame(
            "response.output_item.added", output_index=index, item={"type": "reasoning", "id": rid, "summary": []}
        )
        part = {"type": "summary_text", "text": ""}
        yield frame(
            "response.reasoning_summary_part.added", item_id=rid, output_index=index, summary_index=0, part=part
        )
        for piece in pieces(reply.reasoning):
            yield frame(
                "response.reasoning_summary_text.delta", item_id=rid, output_index=index, summary_index=0, delta=piece
            )
        yield frame(
            "response.reasoning_summary_text.done",
            item_id=rid,
            output_index=index,
            summary_index=0,
            text=reply.reasoning,
        )
        done_part = {"type": "summary_text", "text": reply.reasoning}
        yield frame(
            "response.reasoning_summary_part.done", item_id=rid, output_index=index, summary_index=0, part=done_part
        )
        item = {"type": "reasoning", "id": rid, "summary": [done_part]}
        yield frame("response.output_item.done", output_index=index, item=item)
        output.append(item)
        index += 1
    if reply.text is not None:
        mid = next_id("msg")
        yield frame(
            "response.output_item.added",
            output_index=index,
            item={"type": "message", "id": mid, "role": "assistant", "status": "in_progress", "content": []},
        )
        empty = {"type": "output_text", "text": "", "annotations": []}
        yield frame("response.content_part.added", item_id=mid, output_index=index, content_index=0, part=empty)
        for piece in pieces(reply.text):
            yield frame("response.output_text.delta", item_id=mid, output_index=index, content_index=0, delta=piece)
        if not reply.complete:
            return
        yield frame("response.output_text.done", item_id=mid, output_index=index, content_index=0, text=reply.text)
        full = {"type": "output_text", "text": reply.text, "annotations": []}
        yield frame("response.content_part.done", item_id=mid, output_index=index, content_index=0, part=full)
        item = {"type": "message", "id": mid, "role": "assistant", "status": "completed", "content": [full]}
        yield frame("response.output_item.done", output_index=index, item=item)
        output.append(item)
        index += 1
    if reply.tool is not None:
        spec = reply.tool
        call_id = spec.call_id or next_id("call")
        if spec.custom:
            tid = next_id("ctc")
            added = {"type": "custom_tool_call", "id": tid, "call_id": call_id, "name": spec.name, "input": ""}
            yield frame("response.output_item.added", output_index=index, item=added)
            yield frame("response.custom_tool_call_input.delta", item_id=tid, output_index=index, delta=spec.arguments)
            yield frame("response.custom_tool_call_input.done", item_id=tid, output_index=index, input=spec.arguments)
            item = {**added, "input": spec.arguments, "status": "completed"}
        else:
            tid = next_id("fc")
            added = {
                "type": "function_call",
                "id": tid,
                "call_id": call_id,
                "name": spec.name,
                "arguments": "",
                "status": "in_progress",
            }
            yield frame("response.output_item.added", output_index=index, item=added)
            yield frame("response.function_call_arguments.delta", item_id=tid, output_index=index, delta=spec.arguments)
            yield frame(
                "response.function_call_arguments.done", item_id=tid, output_index=index, arguments=spec.arguments
            )
            item = {**added, "arguments": spec.arguments, "status": "completed"}
        yield frame("response.output_item.done", output_index=index, item=item)
        output.append(item)
    if not reply.complete:
        return
    inp, out, cached = reply.usage
    usage = {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": inp + out,
    }
    yield frame(
        "response.completed",
        response={
            "id": response_id,
            "object": "response",
            "status": "completed",
            "model": model,
            "output": output,
            "usage": usage,
        },
    )


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, fake: FakeOpenAIServer, host: str, port: int) -> None:
        self.fake = fake
        super().__init__((host, port), _Handler)


class FakeOpenAIServer:
    """An OpenAI Responses server on 127.0.0.1 that streams scripted SSE replies and records every request.

    Use it as a (sync or async) context manager, or call ``start()`` and ``close()``. Point a client at
    ``base_url``; any API key is accepted and redacted in the recorded headers.
    """

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, default_text: str = "ok") -> None:
        self.host = host
        self.port = port
        self.default_text = default_text
        self.handler: Callable[[RecordedRequest], Reply | None] | None = None
        self._lock = threading.Lock()
        self._replies: list[Reply] = []
        self._requests: list[RecordedRequest] = []
        self._waiters: list[tuple[int, asyncio.AbstractEventLoop, asyncio.Future[RecordedRequest]]] = []
        self._gates: dict[str, Gate] = {}
        self._ids = itertools.count(1)
        self._closing = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        """Bind and serve in a background thread; returns self."""
        if self._httpd is None:
            self._closing.clear()
            self._httpd = _HTTPServer(self, self.host, self.port)
            self.port = int(self._httpd.server_address[1])
            self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-openai", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, release held replies and join the server thread."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._closing.set()
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    async def __aenter__(self) -> FakeOpenAIServer:
        return self.start()

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.close)

    @property
    def base_url(self) -> str:
        """The Responses base URL (``.../v1``) to configure as the provider's ``base_url``."""
        return f"http://{self.host}:{self.port}/v1"

    # scripting -------------------------------------------------------------------------------------------

    def queue(self, *replies: Reply) -> None:
        """Answer the next requests with ``replies``, in order (directives apply once the queue is empty)."""
        with self._lock:
            self._replies.extend(replies)

    def gate(self, name: str = "") -> Gate:
        """The named gate (created on first use) that ``[[hold NAME]]`` replies wait on."""
        with self._lock:
            gate = self._gates.get(name)
            if gate is None:
                gate = self._gates[name] = Gate(name)
            return gate

    @property
    def pending_replies(self) -> int:
        with self._lock:
            return len(self._replies)

    def _pop_reply(self) -> Reply | None:
        with self._lock:
            return self._replies.pop(0) if self._replies else None

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    # recording -------------------------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def model_requests(self) -> list[RecordedRequest]:
        """The ``POST .../responses`` requests only."""
        return [r for r in self.requests if r.method == "POST" and r.path.rstrip("/").endswith("/responses")]

    def _add_request(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)
            count = len(self._requests)
            ready = [w for w in self._waiters if w[0] <= count]
            self._waiters = [w for w in self._waiters if w[0] > count]
            hits = {n: self._requests[n - 1] for n, _, _ in ready}
        for n, loop, fut in ready:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_resolve, fut, hits[n])

    async def wait_for_request(self, n: int = 1, timeout: float = 30.0) -> RecordedRequest:
        """Wait until at least ``n`` requests arrived and return the ``n``-th."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[RecordedRequest] = loop.create_future()
        with self._lock:
            if len(self._requests) >= n:
                return self._requests[n - 1]
            self._waiters.append((n, loop, fut))
        return await asyncio.wait_for(fut, timeout)


def _resolve(fut: asyncio.Future[RecordedRequest], value: RecordedRequest) -> None:
    if not fut.done():
        fut.set_result(value)
