"""Cursor Agent stream-json lines as adaptor_nb events and transcript items.

The current envelope: ``system/init``, ``user`` (the prompt echoed), ``assistant`` (a whole message between tool
calls, or a delta with ``--stream-partial-output``), ``thinking`` (``delta``/``completed``), ``tool_call``
(``started``/``completed``, the tool's kind as the one key of ``tool_call``) and the terminal ``result``. Older
recordings use ``session``, flat ``assistant``/``thinking`` text, ``tool_call``/``tool_result`` by id and
``run.completed``; both are read. Anything else becomes a Notice, never an error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...driver import (
    HOST_SERVER,
    CapabilityEnd,
    CapabilityStart,
    Event,
    Notice,
    NoticeKind,
    Phase,
    SubagentKind,
    SubagentUpdate,
    TextDelta,
    Thinking,
    ToolCall,
    ToolResult,
    TranscriptItem,
)

# tool_call kinds Cursor reports, by the key under ``tool_call``, and the neutral name each becomes
TOOL_NAMES = {
    "shellToolCall": "shell",
    "readToolCall": "read",
    "editToolCall": "edit",
    "writeToolCall": "write",
    "deleteToolCall": "delete",
    "grepToolCall": "grep",
    "globToolCall": "glob",
    "lsToolCall": "ls",
    "todoToolCall": "todo",
    "updateTodosToolCall": "todo",
    "webSearchToolCall": "web_search",
}
_QUIET = frozenset({"user", "keep_alive", "heartbeat"})


def normalize_call_id(raw: Any) -> str:
    """Cursor joins the model's call id and the provider's item id with a newline: keep one line, joined by ``|``."""
    text = str(raw or "")
    return "|".join(part.strip() for part in text.splitlines() if part.strip())


@dataclass(frozen=True)
class Terminal:
    """The fields of the terminal line that decide how the turn ended."""

    ok: bool
    subtype: str
    text: str | None
    session_id: str
    request_id: str
    duration_ms: int | None
    duration_api_ms: int | None
    error: str


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _mcp_text(result: Any) -> str:
    """The text parts of an MCP call's ``content`` list (``{"text": {"text": ...}}`` or ``{"text": ...}``)."""
    out: list[str] = []
    content = result.get("content") if isinstance(result, dict) else None
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        text = part.get("text")
        if isinstance(text, dict):
            text = text.get("text")
        if isinstance(text, str):
            out.append(text)
    return "".join(out)


def unreadable_frame(frame: dict[str, Any], exc: BaseException) -> Notice:
    """The Notice for a frame the translator cannot read (fields of unexpected types or shapes): it is skipped."""
    kind = frame.get("type")
    shown = kind[:40] if isinstance(kind, str) else type(kind).__name__
    return Notice(
        kind=NoticeKind.LIFECYCLE.value,
        text=f"Cursor Agent wrote a {shown!r} frame this driver cannot read ({type(exc).__name__}: "
        f"{str(exc)[:200]}); it was skipped",
        metadata={"code": "cursor.protocol_error"},
    )


class Translator:
    """Turns the lines of one turn into events (returned) and transcript items (handed to ``transcript``)."""

    def __init__(self, transcript: Callable[[TranscriptItem], None], *, partial: bool) -> None:
        self._transcript = transcript
        self.partial = partial
        self.session_id = ""
        self.model = ""
        self.parts: list[str] = []
        self._open_text = False
        self._block: list[str] = []
        self._open_thinking = False
        self._thinking: list[str] = []
        self._msg = 0
        self._tools: dict[str, str] = {}
        self._tasks: set[str] = set()
        self._capabilities: dict[str, CapabilityStart] = {}
        self.terminal: Terminal | None = None

    @property
    def text(self) -> str:
        return "".join(self.parts)

    # -- dispatch ----------------------------------------------------------------------------------------

    def line(self, frame: dict[str, Any]) -> list[Event]:
        kind = frame.get("type")
        if not isinstance(kind, str):
            return [unreadable_frame(frame, TypeError(f"its type is a {type(kind).__name__}, not a string"))]
        sid = frame.get("session_id")
        if isinstance(sid, str) and sid and not self.session_id:
            self.session_id = sid
        if kind == "system":
            return self._system(frame)
        if kind == "session":
            return self._init(frame, "cursor.session")
        if kind == "assistant":
            return self._assistant(frame)
        if kind == "thinking":
            return self._thinking_line(frame)
        if kind == "tool_call":
            return self._tool_call(frame)
        if kind == "tool_result":
            return self._old_tool_result(frame)
        if kind in ("result", "run.completed"):
            return self._terminal(frame)
        if kind in _QUIET:
            return []
        return [
            Notice(
                kind=NoticeKind.LIFECYCLE.value,
                text=f"unrecognised Cursor event {kind!r}",
                metadata={"code": "cursor.unknown_event", "type": str(kind)},
                data={"frame": frame},
            )
        ]

    def finish(self) -> list[Event]:
        """Close a text or thinking block still open at the end of the stream."""
        return self._close_thinking() + self._close_text()

    # -- session -----------------------------------------------------------------------------------------

    def _system(self, frame: dict[str, Any]) -> list[Event]:
        sub = str(frame.get("subtype") or "")
        if sub == "init":
            return self._init(frame, "cursor.init")
        data = {k: v for k, v in frame.items() if k not in ("type", "subtype", "session_id")}
        return [
            Notice(kind=NoticeKind.LIFECYCLE.value, text=sub or "system", metadata={"code": f"cursor.{sub}"}, data=data)
        ]

    def _init(self, frame: dict[str, Any], code: str) -> list[Event]:
        sid = str(frame.get("session_id") or "")
        if sid:
            self.session_id = sid
        model = frame.get("model")
        if isinstance(model, str) and model:
            self.model = model
        self._transcript(TranscriptItem(kind="init", session_id=sid, model=self.model, data={"cwd": frame.get("cwd")}))
        meta = {
            "code": code,
            "session_id": sid,
            "model": self.model,
            "permission_mode": str(frame.get("permissionMode") or ""),
            "api_key_source": str(frame.get("apiKeySource") or ""),
        }
        data = {k: frame[k] for k in ("cwd",) if k in frame}
        return [Notice(kind=NoticeKind.INVOCATION.value, text=f"session {sid}", metadata=meta, data=data)]

    # -- text and thinking -------------------------------------------------------------------------------

    def _message_id(self) -> str:
        return f"{self.session_id or 'cursor'}:{self._msg}"

    def _close_text(self) -> list[Event]:
        if not self._open_text:
            return []
        self._open_text = False
        self._transcript(TranscriptItem(kind="text", text="".join(self._block), model=self.model))
        return [TextDelta(message_id=self._message_id(), phase=Phase.END)]

    def _close_thinking(self) -> list[Event]:
        if not self._open_thinking:
            return []
        self._open_thinking = False
        text = "".join(self._thinking)
        self._thinking.clear()
        self._transcript(TranscriptItem(kind="thinking", text=text, model=self.model))
        return [Thinking(message_id=self._message_id(), phase=Phase.END)]

    def _assistant(self, frame: dict[str, Any]) -> list[Event]:
        msg = frame.get("message")
        text = _text_of(msg.get("content")) if isinstance(msg, dict) else str(frame.get("text") or "")
        if not text:
            return []
        if self.partial and "timestamp_ms" not in frame and self._open_text and text == "".join(self._block):
            return self._close_text()  # the whole message repeated after its deltas
        out = self._close_thinking()
        if not self._open_text:
            self._msg += 1
            self._open_text = True
            self._block = []
            out.append(TextDelta(message_id=self._message_id(), phase=Phase.START))
        self._block.append(text)
        self.parts.append(text)
        out.append(TextDelta(text=text, message_id=self._message_id()))
        if not self.partial:
            out += self._close_text()  # a whole message: its block ends with it
        return out

    def _thinking_line(self, frame: dict[str, Any]) -> list[Event]:
        sub = frame.get("subtype")
        if sub == "completed":
            return self._close_thinking()
        text = str(frame.get("text") or "")
        out = self._close_text()
        if not self._open_thinking:
            self._msg += 1
            self._open_thinking = True
            out.append(Thinking(message_id=self._message_id(), phase=Phase.START))
        if text:
            self._thinking.append(text)
            out.append(Thinking(text=text, message_id=self._message_id()))
        if sub != "delta":
            out += self._close_thinking()  # an old-shape whole thought
        return out

    # -- tools -------------------------------------------------------------------------------------------

    def _tool_call(self, frame: dict[str, Any]) -> list[Event]:
        body = frame.get("tool_call")
        if not isinstance(body, dict):
            return self._old_tool_call(frame)
        call_id = normalize_call_id(frame.get("call_id") or body.get("toolCallId"))
        kinds = [k for k in body if k.endswith("ToolCall") or k == "function"]
        kind = kinds[0] if kinds else ""
        inner = body.get(kind) if kind else None
        inner = inner if isinstance(inner, dict) else {}
        args = inner.get("args")
        args = args if isinstance(args, dict) else {}
        out = self._close_thinking() + self._close_text()
        if kind == "taskToolCall":
            return out + self._task(frame.get("subtype"), call_id, args, inner)
        name, args = self._name_and_args(kind, inner, args)
        if frame.get("subtype") == "started":
            self._tools[call_id] = name
            self._transcript(TranscriptItem(kind="tool_use", tool_use_id=call_id, tool_name=name, input=args))
            out += [
                ToolCall(id=call_id, name=name, phase=Phase.START),
                ToolCall(id=call_id, name=name, args=args, phase=Phase.END),
                *self._capability_start(kind, call_id, args),
            ]
            return out
        if frame.get("subtype") == "completed":
            if call_id not in self._tools:  # a completion without its start: report the call first
                self._tools[call_id] = name
                self._transcript(TranscriptItem(kind="tool_use", tool_use_id=call_id, tool_name=name, input=args))
                out += [
                    ToolCall(id=call_id, name=name, phase=Phase.START),
                    ToolCall(id=call_id, name=name, args=args, phase=Phase.END),
                    *self._capability_start(kind, call_id, args),
                ]
            raw = inner.get("result")
            result, is_error, text = self._tool_outcome(kind, raw)
            self._transcript(
                TranscriptItem(kind="tool_result", text=text, tool_use_id=call_id, tool_name=name, is_error=is_error)
            )
            out.append(ToolResult(id=call_id, result=result, is_error=is_error, name=name))
            out += self._capability_end(call_id, result, not is_error)
            return out
        return out

    def _capability_start(self, kind: str, call_id: str, args: dict[str, Any]) -> list[Event]:
        """A capability's start for an MCP server's tool (not a host tool), web search or a subagent task."""
        if call_id in self._capabilities:
            return []
        if kind == "mcpToolCall" and args.get("server") != HOST_SERVER:
            start = CapabilityStart(
                kind="mcp_tool", name=f"{args.get('server')}/{args.get('tool')}", scope=call_id, input=args["arguments"]
            )
        elif kind == "webSearchToolCall":
            start = CapabilityStart(kind="web_search", name="web_search", scope=call_id, input=args)
        elif kind == "taskToolCall":
            name = str(args.get("member") or "task")
            start = CapabilityStart(kind="subagent", name=name, scope=call_id, input=args.get("args"))
        else:
            return []
        self._capabilities[call_id] = start
        return [start]

    def _capability_end(self, call_id: str, output: Any, ok: bool) -> list[Event]:
        start = self._capabilities.pop(call_id, None)
        if start is None:
            return []
        return [CapabilityEnd(kind=start.kind, name=start.name, scope=call_id, output=output, ok=ok)]

    @staticmethod
    def _call(call_id: str, name: str, args: dict[str, Any]) -> list[Event]:
        return [
            ToolCall(id=call_id, name=name, phase=Phase.START),
            ToolCall(id=call_id, name=name, args=args, phase=Phase.END),
        ]

    def _name_and_args(self, kind: str, inner: dict[str, Any], args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if kind == "mcpToolCall":
            server = str(args.get("providerIdentifier") or args.get("serverIdentifier") or "")
            tool = str(args.get("toolName") or args.get("name") or "")
            call_args = args.get("args")
            shown = {"server": server, "tool": tool, "arguments": call_args if isinstance(call_args, dict) else {}}
            return f"mcp__{server}__{tool}", shown
        if kind == "function":
            name = str(inner.get("name") or "function")
            raw = inner.get("arguments")
            try:
                parsed = json.loads(raw) if isinstance(raw, str) and raw else raw
            except ValueError:
                parsed = {"_raw": raw}
            return name, parsed if isinstance(parsed, dict) else {"value": parsed}
        return TOOL_NAMES.get(kind, kind.removesuffix("ToolCall") or "tool"), args

    def _tool_outcome(self, kind: str, raw: Any) -> tuple[dict[str, Any], bool, str]:
        """The ToolResult payload, whether it failed, and its text for the transcript."""
        if not isinstance(raw, dict):
            return {"value": raw}, False, "" if raw is None else str(raw)
        if "success" in raw:
            ok = raw["success"] if isinstance(raw["success"], dict) else {"value": raw["success"]}
            is_error = bool(ok.get("isError"))
            if kind == "mcpToolCall":
                text = _mcp_text(ok)
            elif kind == "shellToolCall":
                text = str(ok.get("stdout") or ok.get("interleavedOutput") or "")
                code = _int(ok.get("exitCode"))
                is_error = is_error or bool(code)
            else:
                text = str(ok.get("content") or ok.get("message") or "")
            return dict(ok), is_error, text
        for key in ("error", "failure", "rejected", "permissionDenied"):
            if key in raw:
                err = raw[key]
                text = (
                    str(err.get("error") or err.get("message") or err.get("reason") or key)
                    if isinstance(err, dict)
                    else str(err)
                )
                return {key: err}, True, text
        return dict(raw), False, ""

    def _task(self, sub: Any, call_id: str, args: dict[str, Any], inner: dict[str, Any]) -> list[Event]:
        kind = args.get("subagentType")
        member = ""
        if isinstance(kind, dict):
            custom = kind.get("custom")
            member = str(custom.get("name") or "") if isinstance(custom, dict) else next(iter(kind), "")
        elif isinstance(kind, str):
            member = kind
        summary = str(args.get("description") or "")
        data: dict[str, Any] = {k: args[k] for k in ("prompt", "model", "agentId") if k in args}
        out: list[Event] = []
        if sub == "started" or call_id not in self._tasks:
            self._tasks.add(call_id)
            self._tools[call_id] = "task"
            self._transcript(TranscriptItem(kind="tool_use", tool_use_id=call_id, tool_name="task", input=args))
            out += [
                ToolCall(id=call_id, name="task", phase=Phase.START),
                ToolCall(id=call_id, name="task", args=args, phase=Phase.END),
                SubagentUpdate(
                    task=call_id, member=member, state="started", summary=summary, kind=SubagentKind.STARTED, data=data
                ),
                *self._capability_start("taskToolCall", call_id, {"member": member, "args": args}),
            ]
        if sub != "completed":
            return out
        raw = inner.get("result")
        ok = raw.get("success") if isinstance(raw, dict) else None
        steps_text: list[str] = []
        steps = ok.get("conversationSteps") if isinstance(ok, dict) else None
        if isinstance(steps, list):
            for step in steps:
                message = step.get("assistantMessage") if isinstance(step, dict) else None
                if isinstance(message, dict) and isinstance(message.get("text"), str):
                    steps_text.append(message["text"])
                    out.append(
                        SubagentUpdate(task=call_id, member=member, kind=SubagentKind.MESSAGE, summary=message["text"])
                    )
        failed = not isinstance(ok, dict)
        finished: dict[str, Any] = {}
        if isinstance(ok, dict):
            finished = {k: ok[k] for k in ("agentId", "isBackground", "durationMs") if k in ok}
            if "agentId" in args and ok.get("agentId") not in (None, args["agentId"]):
                finished["requested_agent_id"] = args["agentId"]
        text = "\n".join(steps_text)
        result: dict[str, Any] = dict(ok) if isinstance(ok, dict) else {"error": raw}
        self._transcript(
            TranscriptItem(kind="tool_result", text=text, tool_use_id=call_id, tool_name="task", is_error=failed)
        )
        out += [
            ToolResult(id=call_id, result=result, is_error=failed, name="task"),
            *self._capability_end(call_id, result, not failed),
            SubagentUpdate(
                task=call_id,
                member=member,
                state="failed" if failed else "completed",
                summary=text[:500],
                kind=SubagentKind.FINISHED,
                data=finished,
            ),
        ]
        return out

    def _old_tool_call(self, frame: dict[str, Any]) -> list[Event]:
        call_id = normalize_call_id(frame.get("id") or frame.get("call_id"))
        name = str(frame.get("name") or "tool")
        raw = frame.get("input")
        args = raw if isinstance(raw, dict) else {}
        self._tools[call_id] = name
        self._transcript(TranscriptItem(kind="tool_use", tool_use_id=call_id, tool_name=name, input=args))
        out = self._close_thinking() + self._close_text()
        return [
            *out,
            ToolCall(id=call_id, name=name, phase=Phase.START),
            ToolCall(id=call_id, name=name, args=args, phase=Phase.END),
        ]

    def _old_tool_result(self, frame: dict[str, Any]) -> list[Event]:
        call_id = normalize_call_id(frame.get("id") or frame.get("call_id"))
        name = self._tools.get(call_id, "")
        text = str(frame.get("text") or frame.get("output") or "")
        is_error = bool(frame.get("is_error"))
        self._transcript(
            TranscriptItem(kind="tool_result", text=text, tool_use_id=call_id, tool_name=name, is_error=is_error)
        )
        return [ToolResult(id=call_id, result={"text": text}, is_error=is_error, name=name)]

    # -- the end -----------------------------------------------------------------------------------------

    def _terminal(self, frame: dict[str, Any]) -> list[Event]:
        sub = str(frame.get("subtype") or ("success" if frame.get("type") == "run.completed" else ""))
        is_error = bool(frame.get("is_error"))
        text = frame.get("result")
        error = frame.get("error") or frame.get("message") or ""
        self.terminal = Terminal(
            ok=sub == "success" and not is_error,
            subtype=sub,
            text=text if isinstance(text, str) else None,
            session_id=str(frame.get("session_id") or self.session_id),
            request_id=str(frame.get("request_id") or ""),
            duration_ms=_int(frame.get("duration_ms")),
            duration_api_ms=_int(frame.get("duration_api_ms")),
            error=error if isinstance(error, str) else json.dumps(error),
        )
        return self.finish()
