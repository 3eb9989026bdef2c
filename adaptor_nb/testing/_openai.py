"""A scriptable OpenAI Responses server on 127.0.0.1 that streams SSE replies and records every request.

Point Codex at it with a ``model_providers`` entry whose ``base_url`` is ``server.base_url`` (``wire_api =
"responses"``). Replies come, in this order, from the queue filled by ``server.enqueue(...)``, from
``server.responder`` (a function of the request), or from directives written in the newest user message:

``[[say TEXT]]``             the answer text (default "ok"; "Done. Last tool output: ..." right after a tool result)
``[[think TEXT]]``           a reasoning summary before the answer
``[[tool NAME {json}]]``     a ``function_call`` such as ``exec_command``
``[[custom NAME INPUT]]``    a free-text ``custom_tool_call`` such as ``apply_patch``
``[[json {json}]]``          the answer is that JSON (a request with a JSON schema and no directive gets an example)
``[[status CODE]]``          an HTTP error with an OpenAI error body
``[[incomplete TEXT]]``      stream TEXT and end the body without ``response.completed``
``[[hold NAME]]``            pause after ``response.created`` until ``server.hold(NAME).set()``
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import itertools
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

from ._scripted_http import OwnedServer, ScriptedHTTPServer

__all__ = ["FakeOpenAIServer", "RecordedRequest", "Reply", "ToolCallSpec", "example_for_schema"]

DEFAULT_TEXT = "ok"
_DIRECTIVE = re.compile(r"\[\[(say|think|tool|custom|json|status|incomplete|hold)(?:\s(.*?))?\]\]", re.DOTALL)
_SYNTHETIC_USER_PREFIXES = ("<environment_context>", "<turn_aborted>", "<user_instructions>")
_TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output")


@dataclass(frozen=True)
class ToolCallSpec:
    """A tool call the fake model makes: a JSON ``function_call`` or a free-text ``custom_tool_call``."""

    name: str
    arguments: str
    custom: bool = False
    call_id: str = ""
    namespace: str = ""


@dataclass(frozen=True)
class Reply:
    """One scripted model response: optional reasoning, then answer text and/or tool calls, or an HTTP error.

    ``tool`` is one call; ``tools`` adds more calls to the same response (after ``tool``), as a model asking for
    parallel calls in one step does (see :meth:`function_calls`). ``hold`` (a ``threading.Event``) pauses the stream
    after ``response.created`` until it is set; ``complete=False`` ends the body without ``response.completed``;
    ``usage`` is (input, output, cached input) tokens. ``web_search`` (a query) puts a ``web_search_call`` item, the
    search the hosted web search tool ran, before the answer.
    """

    answer: str | None = None
    reasoning: str | None = None
    tool: ToolCallSpec | None = None
    tools: tuple[ToolCallSpec, ...] = ()
    status: int = 200
    error_message: str = ""
    complete: bool = True
    hold: threading.Event | None = None
    usage: tuple[int, int, int] = (20, 5, 0)
    words_per_delta: int = 4
    web_search: str | None = None

    @classmethod
    def text(cls, text: str, **kw: Any) -> Reply:
        """Stream ``text`` as the answer (``reasoning=`` adds a reasoning summary first)."""
        return cls(answer=text, **kw)

    @classmethod
    def json(cls, value: Any, **kw: Any) -> Reply:
        """Answer with ``value`` serialized as JSON."""
        return cls(answer=json.dumps(value), **kw)

    @classmethod
    def function_call(
        cls, name: str, arguments: dict[str, Any] | str, *, call_id: str = "", namespace: str = "", **kw: Any
    ) -> Reply:
        """Call a JSON function tool such as ``exec_command`` (``namespace`` for namespaced tools like MCP's)."""
        args = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return cls(tool=ToolCallSpec(name, args, call_id=call_id, namespace=namespace), **kw)

    @classmethod
    def function_calls(cls, *calls: tuple[str, dict[str, Any] | str], namespace: str = "", **kw: Any) -> Reply:
        """Several JSON function calls in one response (one model step), each ``(name, arguments)``."""
        specs = tuple(
            ToolCallSpec(name, args if isinstance(args, str) else json.dumps(args), namespace=namespace)
            for name, args in calls
        )
        return cls(tools=specs, **kw)

    @property
    def calls(self) -> tuple[ToolCallSpec, ...]:
        """Every tool call of the response, in order."""
        return ((self.tool,) if self.tool is not None else ()) + self.tools

    @classmethod
    def exec_command(cls, cmd: str, *, hold: threading.Event | None = None, **params: Any) -> Reply:
        """Ask Codex to run ``cmd`` with its ``exec_command`` tool (``params`` adds e.g. ``sandbox_permissions``)."""
        return cls.function_call("exec_command", {"cmd": cmd, **params}, hold=hold)

    @classmethod
    def apply_patch(cls, patch: str, **kw: Any) -> Reply:
        """Ask Codex to apply ``patch`` with its free-text ``apply_patch`` tool."""
        return cls(tool=ToolCallSpec("apply_patch", patch, custom=True), **kw)

    @classmethod
    def error(cls, status: int = 500, message: str = "fake server error") -> Reply:
        """Fail the request with an HTTP error and an OpenAI error body."""
        return cls(status=status, error_message=message)

    @classmethod
    def incomplete(cls, text: str = "", **kw: Any) -> Reply:
        """Stream ``text`` and end the body without ``response.completed``."""
        return cls(answer=text, complete=False, **kw)


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
    def is_model_request(self) -> bool:
        return self.method == "POST" and self.path.rstrip("/").endswith("/responses")

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
        """User messages, without the CLI's synthetic context messages."""
        return [t for t in self.texts("user") if not t.startswith(_SYNTHETIC_USER_PREFIXES)]

    @property
    def prompt(self) -> str:
        """The newest user message."""
        texts = self.user_texts()
        return texts[-1] if texts else ""

    @property
    def prompt_images(self) -> list[tuple[str, bytes]]:
        """The ``data:`` URL images of the newest user message as ``(media_type, bytes)``, in order."""
        for item in reversed(self.input_items):
            if item.get("type", "message") != "message" or item.get("role") != "user":
                continue
            content = item.get("content")
            parts = [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []
            text = "".join(str(p.get("text", "")) for p in parts)
            if text.startswith(_SYNTHETIC_USER_PREFIXES):
                continue
            out: list[tuple[str, bytes]] = []
            for part in parts:
                url = str(part.get("image_url", "")) if part.get("type") == "input_image" else ""
                head, _, data = url.partition(";base64,")
                if head.startswith("data:") and data:
                    out.append((head[len("data:") :], base64.b64decode(data)))
            return out
        return []

    @property
    def tool_outputs(self) -> list[str]:
        """Outputs of the tool calls the client sent back, in order."""
        out: list[str] = []
        for item in self.input_items:
            if item.get("type") in _TOOL_OUTPUTS:
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
        """Names (or types, for built-in tools) of the tools the client declared."""
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
        return [example_for_schema(schema.get("items", {})) for _ in range(int(schema.get("minItems", 0)))]
    return {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "null": None}.get(str(kind), "x")


def _directive_reply(request: RecordedRequest, server: FakeOpenAIServer) -> Reply:
    items = request.input_items
    if items and items[-1].get("type") in _TOOL_OUTPUTS:
        outputs = request.tool_outputs
        return Reply(answer=f"Done. Last tool output: {outputs[-1] if outputs else ''}")
    reasoning: str | None = None
    hold: threading.Event | None = None
    for match in _DIRECTIVE.finditer(request.prompt):
        verb, arg = match.group(1), match.group(2) or ""
        if verb == "think":
            reasoning = arg
        elif verb == "hold":
            hold = server.hold(arg.strip())
        elif verb in ("say", "json"):
            return Reply(answer=arg.strip() if verb == "json" else arg, reasoning=reasoning, hold=hold)
        elif verb == "incomplete":
            return Reply(answer=arg, complete=False, reasoning=reasoning, hold=hold)
        elif verb == "status":
            return Reply.error(int(arg.strip() or "500"))
        elif verb in ("tool", "custom"):
            name, _, rest = arg.lstrip().partition(" ")
            custom = verb == "custom"
            spec = ToolCallSpec(name, rest if custom else (rest.strip() or "{}"), custom=custom)
            return Reply(tool=spec, reasoning=reasoning, hold=hold)
    if request.output_schema is not None:
        return Reply(answer=json.dumps(example_for_schema(request.output_schema)), reasoning=reasoning, hold=hold)
    return Reply(answer=server.default_text, reasoning=reasoning, hold=hold)


def _sse_events(reply: Reply, model: str, next_id: Callable[[str], str]) -> Iterator[bytes]:
    """The SSE frames of one reply, in the order the Responses API sends them."""
    seq = itertools.count()
    response_id = next_id("resp")

    def frame(kind: str, **payload: Any) -> bytes:
        data = {"type": kind, "sequence_number": next(seq), **payload}
        return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()

    def deltas(text: str) -> list[str]:
        words = re.findall(r"\S+\s*|\s+", text)
        n = max(1, reply.words_per_delta)
        return ["".join(words[i : i + n]) for i in range(0, len(words), n)] or [text]

    created = {"id": response_id, "object": "response", "status": "in_progress", "model": model, "output": []}
    yield frame("response.created", response=created)
    output: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        rid, idx = next_id("rs"), len(output)
        yield frame(
            "response.output_item.added", output_index=idx, item={"type": "reasoning", "id": rid, "summary": []}
        )
        where = {"item_id": rid, "output_index": idx, "summary_index": 0}
        yield frame("response.reasoning_summary_part.added", **where, part={"type": "summary_text", "text": ""})
        for piece in deltas(reply.reasoning):
            yield frame("response.reasoning_summary_text.delta", **where, delta=piece)
        yield frame("response.reasoning_summary_text.done", **where, text=reply.reasoning)
        part = {"type": "summary_text", "text": reply.reasoning}
        yield frame("response.reasoning_summary_part.done", **where, part=part)
        item = {"type": "reasoning", "id": rid, "summary": [part]}
        yield frame("response.output_item.done", output_index=idx, item=item)
        output.append(item)
    if reply.web_search is not None:
        wid, idx = next_id("ws"), len(output)
        yield frame("response.output_item.added", output_index=idx, item={"type": "web_search_call", "id": wid,
                                                                          "status": "in_progress"})  # fmt: skip
        action = {"type": "search", "query": reply.web_search}
        searched: dict[str, Any] = {"type": "web_search_call", "id": wid, "status": "completed", "action": action}
        yield frame("response.output_item.done", output_index=idx, item=searched)
        output.append(searched)
    if reply.answer is not None:
        mid, idx = next_id("msg"), len(output)
        added = {"type": "message", "id": mid, "role": "assistant", "status": "in_progress", "content": []}
        yield frame("response.output_item.added", output_index=idx, item=added)
        where = {"item_id": mid, "output_index": idx, "content_index": 0}
        yield frame("response.content_part.added", **where, part={"type": "output_text", "text": "", "annotations": []})
        for piece in deltas(reply.answer):
            yield frame("response.output_text.delta", **where, delta=piece)
        if not reply.complete:
            return
        yield frame("response.output_text.done", **where, text=reply.answer)
        full = {"type": "output_text", "text": reply.answer, "annotations": []}
        yield frame("response.content_part.done", **where, part=full)
        item = {**added, "status": "completed", "content": [full]}
        yield frame("response.output_item.done", output_index=idx, item=item)
        output.append(item)
    for spec in reply.calls:
        idx = len(output)
        call_id = spec.call_id or next_id("call")
        if spec.custom:
            tid = next_id("ctc")
            added = {"type": "custom_tool_call", "id": tid, "call_id": call_id, "name": spec.name, "input": ""}
            yield frame("response.output_item.added", output_index=idx, item=added)
            yield frame("response.custom_tool_call_input.delta", item_id=tid, output_index=idx, delta=spec.arguments)
            yield frame("response.custom_tool_call_input.done", item_id=tid, output_index=idx, input=spec.arguments)
            item = {**added, "input": spec.arguments, "status": "completed"}
        else:
            tid = next_id("fc")
            added = {"type": "function_call", "id": tid, "call_id": call_id, "name": spec.name, "arguments": "",
                     "status": "in_progress"}  # fmt: skip
            if spec.namespace:
                added["namespace"] = spec.namespace
            yield frame("response.output_item.added", output_index=idx, item=added)
            where = {"item_id": tid, "output_index": idx}
            yield frame("response.function_call_arguments.delta", **where, delta=spec.arguments)
            yield frame("response.function_call_arguments.done", **where, arguments=spec.arguments)
            item = {**added, "arguments": spec.arguments, "status": "completed"}
        yield frame("response.output_item.done", output_index=idx, item=item)
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
    done = {**created, "status": "completed", "output": output, "usage": usage}
    yield frame("response.completed", response=done)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: OwnedServer

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
        request = self._record(self.rfile.read(length) if length else b"")
        if not request.is_model_request:
            self._send_json(404, {"error": {"message": f"no route for POST {self.path}", "type": "not_found"}})
            return
        reply = self.server.owner._next_reply(request)
        if reply.status != 200:
            body = {"error": {"message": reply.error_message, "type": "server_error", "code": None}}
            self._send_json(reply.status, body)
            return
        try:
            self._stream(reply, request)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

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

    def _stream(self, reply: Reply, request: RecordedRequest) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        owner = self.server.owner
        events = _sse_events(reply, request.model or "gpt-fake", owner._next_id)
        self._chunk(next(events))
        if reply.hold is not None:
            while not reply.hold.wait(0.05):
                if owner._stopping.is_set():
                    self.close_connection = True
                    return
        for event in events:
            self._chunk(event)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


_Reply = Reply


class FakeOpenAIServer(ScriptedHTTPServer[Reply, RecordedRequest]):
    """A local OpenAI Responses API for tests and offline notebooks; use it as a (sync or async) context manager.

    Example::

        with FakeOpenAIServer() as server:
            server.enqueue(FakeOpenAIServer.Reply.text("hi"))
            # Codex config: model_providers.fake = {base_url = server.base_url, wire_api = "responses", ...}
    """

    Reply: ClassVar[type[_Reply]] = _Reply
    handler = _Handler

    def __init__(self, *, default_text: str = DEFAULT_TEXT) -> None:
        super().__init__()
        self.default_text = default_text
        self._waiters: list[tuple[int, asyncio.AbstractEventLoop, asyncio.Future[RecordedRequest]]] = []
        self._ids = itertools.count(1)

    @property
    def base_url(self) -> str:
        """The Responses base URL (``.../v1``) to configure as a provider's ``base_url``."""
        return f"{self.url}/v1"

    def _fallback_reply(self, request: RecordedRequest) -> _Reply:
        return _directive_reply(request, self)

    def _is_model_request(self, request: RecordedRequest) -> bool:
        return request.is_model_request

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    def _record(self, request: RecordedRequest) -> None:
        super()._record(request)
        with self._cond:
            models = [r for r in self._requests if r.is_model_request]
            ready = [w for w in self._waiters if w[0] <= len(models)]
            self._waiters = [w for w in self._waiters if w[0] > len(models)]
        for n, loop, fut in ready:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_resolve, fut, models[n - 1])

    async def model_request(self, n: int = 1, timeout: float = 30.0) -> RecordedRequest:
        """Wait (without blocking the event loop) for the ``n``-th model request and return it."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[RecordedRequest] = loop.create_future()
        with self._cond:
            models = [r for r in self._requests if r.is_model_request]
            if len(models) >= n:
                return models[n - 1]
            self._waiters.append((n, loop, fut))
        return await asyncio.wait_for(fut, timeout)


def _resolve(fut: asyncio.Future[RecordedRequest], value: RecordedRequest) -> None:
    if not fut.done():
        fut.set_result(value)
