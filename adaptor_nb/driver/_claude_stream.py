"""Claude-like stream-json frames as adaptor_nb events and transcript items, for the drivers of CLIs that speak it.

Claude Code and CodeBuddy Code write the same frames (``system``, ``stream_event``, ``assistant``, ``user``,
``result``); ``ClaudeLikeTranslator`` turns them into events, and a driver subclasses it for its CLI's own frames and
names (``PREFIX`` for the notice codes, ``LABEL`` for texts, ``VERSION_KEY`` for the init line's version field).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .._enums import NoticeKind, Phase, SubagentKind
from .._events import Event, Notice, SubagentUpdate, TextDelta, Thinking, ToolCall, ToolResult
from .._result import TranscriptItem, Usage
from ._claude_activity import ClaudeActivity

SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
_QUIET_SYSTEM = frozenset({"thinking_tokens"})
_NO_PARTS: tuple[str, ...] = ()


@dataclass
class _Block:
    kind: str  # text | thinking | tool_use | other
    parts: list[str] = field(default_factory=list)
    tool_id: str = ""
    name: str = ""


@dataclass(frozen=True)
class ClaudeLikeResult:
    """The fields of a ``result`` frame that decide how a turn ended."""

    subtype: str
    is_error: bool
    text: str | None
    usage: Usage | None
    cost_usd: float | None
    cost_total: float | None
    session_id: str
    api_error_status: int | None
    errors: tuple[str, ...]
    structured: Any
    has_structured: bool
    stop_reason: str
    terminal_reason: str
    errors_info: tuple[dict[str, Any], ...] = ()
    num_turns: int = 0

    @property
    def ok(self) -> bool:
        return self.subtype == "success" and not self.is_error


def _text(value: Any) -> str:
    """A frame's text field as a string: a CLI that writes a number or a list there still has it kept as text."""
    if isinstance(value, str):
        return value
    return "" if value is None else str(value)


def _index(ev: dict[str, Any]) -> int:
    index = ev.get("index", -1)
    return index if isinstance(index, int) and not isinstance(index, bool) else -1


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_of(raw: Any, cost_usd: float | None = None) -> Usage | None:
    """Anthropic usage as Usage: input counts every prompt token (cached included), cached = cache reads."""
    if not isinstance(raw, dict):
        return None
    cache_read = _int(raw.get("cache_read_input_tokens"))
    cache_write = _int(raw.get("cache_creation_input_tokens"))
    return Usage(
        input_tokens=_int(raw.get("input_tokens")) + cache_read + cache_write,
        output_tokens=_int(raw.get("output_tokens")),
        cached_input_tokens=cache_read,
        estimated_cost_milli=round(cost_usd * 1000) if cost_usd else 0,
    )


def parse_claude_like_result(frame: dict[str, Any], cost_before: float) -> ClaudeLikeResult:
    """Read a ``result`` frame; the cost is this turn's share of the process's running ``total_cost_usd``.

    ``errors_info`` (CodeBuddy's HTTP error details) also gives ``api_error_status`` when the frame has none.
    """
    total = frame.get("total_cost_usd")
    cost_total = float(total) if isinstance(total, int | float) and not isinstance(total, bool) else None
    cost = max(0.0, cost_total - cost_before) if cost_total is not None else None
    errors = frame.get("errors")
    if not isinstance(errors, list):
        note = frame.get("message") or frame.get("error")
        errors = [note] if isinstance(note, str) and note else None
    status = frame.get("api_error_status")
    info = frame.get("errors_info")
    errors_info = tuple(e for e in info if isinstance(e, dict)) if isinstance(info, list) else ()
    if status is None:
        status = next((e.get("status") for e in errors_info if isinstance(e.get("status"), int)), None)
    text = frame.get("result")
    return ClaudeLikeResult(
        subtype=str(frame.get("subtype") or ""),
        is_error=bool(frame.get("is_error")),
        text=text if isinstance(text, str) else None,
        usage=usage_of(frame.get("usage"), cost),
        cost_usd=cost,
        cost_total=cost_total,
        session_id=str(frame.get("session_id") or ""),
        api_error_status=status if isinstance(status, int) and not isinstance(status, bool) else None,
        errors=tuple(str(e) for e in errors) if isinstance(errors, list) else (),
        structured=frame.get("structured_output"),
        has_structured="structured_output" in frame,
        stop_reason=str(frame.get("stop_reason") or ""),
        terminal_reason=str(frame.get("terminal_reason") or ""),
        errors_info=errors_info,
        num_turns=_int(frame.get("num_turns")),
    )


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


class ClaudeLikeTranslator:
    """Turns the frames of one run into events (returned) and transcript items (handed to ``transcript``).

    Streamed blocks (``--include-partial-messages``) give start/content/end events; whole ``assistant`` messages
    fill in what was not streamed, so the same text is never reported twice.
    """

    PREFIX = "claude"
    LABEL = "Claude"
    VERSION_KEY = "claude_code_version"
    QUIET_FRAMES = frozenset({"prompt_suggestion", "keep_alive", "rate_limit_event"})
    SKIP_EMPTY_STATUS = False  # a ``system/status`` line with neither status nor mode is dropped

    def __init__(self, transcript: Any) -> None:
        self._transcript = transcript
        self.blocks: dict[int, _Block] = {}
        self.msg_id = ""
        self._streamed: set[str] = set()
        self._streamed_blocks: list[tuple[str, str]] = []
        self._ended_tools: set[str] = set()
        self.tool_names: dict[str, str] = {}
        self._subagent_tools: set[str] = set()
        self._finished_tasks: set[str] = set()
        self.open_tools: set[str] = set()
        self.model = ""
        self.init_model = ""
        self.session_id = ""
        self.inits = 0
        self.activity = ClaudeActivity(self.PREFIX)

    # -- streamed blocks ---------------------------------------------------------------------------------

    def stream_event(self, frame: dict[str, Any]) -> list[Event]:
        """One ``stream_event`` line."""
        ev = frame.get("event")
        if not isinstance(ev, dict):
            return []
        if frame.get("parent_tool_use_id"):
            return self._subagent_stream(frame["parent_tool_use_id"], ev)
        et = ev.get("type")
        if et == "content_block_delta":
            blk = self.blocks.get(_index(ev))
            delta = ev.get("delta")
            if blk is None or not isinstance(delta, dict):
                return []
            dt = delta.get("type")  # a text delta never gets here: the Claude-family decoder reads those
            if dt == "thinking_delta":
                text = _text(delta.get("thinking"))
                blk.parts.append(text)
                return [Thinking(text=text, message_id=self.msg_id)]
            if dt == "input_json_delta":
                part = _text(delta.get("partial_json"))
                blk.parts.append(part)
                return [ToolCall(id=blk.tool_id, name=blk.name, args_delta=part, phase=Phase.CONTENT)]
            return []
        if et == "content_block_start":
            cb = ev.get("content_block")
            kind = cb.get("type", "other") if isinstance(cb, dict) else "other"
            index = _index(ev)
            if kind == "text":
                self.blocks[index] = _Block("text")
                return [TextDelta(message_id=self.msg_id, phase=Phase.START)]
            if kind in ("thinking", "redacted_thinking"):
                self.blocks[index] = _Block("thinking")
                return [Thinking(message_id=self.msg_id, phase=Phase.START)]
            if kind in ("tool_use", "server_tool_use", "mcp_tool_use") and isinstance(cb, dict):
                tool_id = str(cb.get("id", ""))
                name = str(cb.get("name", ""))
                self.blocks[index] = _Block("tool_use", tool_id=tool_id, name=name)
                self.tool_names[tool_id] = name
                return [ToolCall(id=tool_id, name=name, phase=Phase.START)]
            self.blocks[index] = _Block("other")
            return []
        if et == "content_block_stop":
            blk = self.blocks.pop(_index(ev), None)
            return self._end_block(blk) if blk is not None else []
        if et == "message_start":
            msg = ev.get("message")
            if isinstance(msg, dict):
                self.msg_id = str(msg.get("id", ""))
                self._streamed.add(self.msg_id)
                model = msg.get("model")
                if isinstance(model, str) and model and not model.startswith("<"):
                    self.model = model
            self.blocks.clear()
            self._streamed_blocks.clear()
            return []
        return []

    def _end_block(self, blk: _Block) -> list[Event]:
        if blk.kind in ("text", "thinking"):
            self._streamed_blocks.append((blk.kind, "".join(blk.parts)))
        if blk.kind == "text":
            text = "".join(blk.parts)
            self._transcript(TranscriptItem(kind="text", text=text, model=self.model))
            return [TextDelta(message_id=self.msg_id, phase=Phase.END)]
        if blk.kind == "thinking":
            text = "".join(blk.parts)
            self._transcript(TranscriptItem(kind="thinking", text=text, model=self.model))
            return [Thinking(message_id=self.msg_id, phase=Phase.END)]
        if blk.kind == "tool_use":
            if blk.tool_id in self._ended_tools:
                return []
            raw = "".join(blk.parts)
            try:
                args = json.loads(raw) if raw else {}
            except ValueError:
                args = {"_raw": raw}
            return self._tool_end(blk.tool_id, blk.name, args if isinstance(args, dict) else {"value": args})
        return []

    def _tool_end(self, tool_id: str, name: str, args: dict[str, Any]) -> list[Event]:
        self._ended_tools.add(tool_id)
        self.open_tools.add(tool_id)
        self.tool_names[tool_id] = name
        self._transcript(TranscriptItem(kind="tool_use", tool_use_id=tool_id, tool_name=name, input=args))
        out: list[Event] = [ToolCall(id=tool_id, name=name, args=args, phase=Phase.END)]
        out += self.activity.tool(tool_id, name, args)
        if name in SUBAGENT_TOOLS:
            self._subagent_tools.add(tool_id)
            member = args.get("subagent_type") or args.get("agent") or ""
            summary = args.get("description") or ""
            out.append(
                SubagentUpdate(
                    task=tool_id,
                    member=str(member),
                    state="started",
                    summary=str(summary),
                    kind=SubagentKind.STARTED,
                    data={"tool": name},
                )
            )
        return out

    # -- whole messages ----------------------------------------------------------------------------------

    def assistant(self, frame: dict[str, Any]) -> list[Event]:
        """One ``assistant`` line (a whole message, or one block of it)."""
        msg = frame.get("message")
        if not isinstance(msg, dict):
            return []
        content = msg.get("content")
        blocks = content if isinstance(content, list) else []
        parent = frame.get("parent_tool_use_id")
        if parent:
            return self._subagent_message(str(parent), blocks)
        model = msg.get("model")
        if frame.get("error") or model == "<synthetic>":
            text = _content_text(blocks)
            self._transcript(TranscriptItem(kind="error", text=text, is_error=True, data={"error": frame.get("error")}))
            return [
                Notice(
                    kind=NoticeKind.LIFECYCLE.value,
                    text=text,
                    metadata={"code": f"{self.PREFIX}.api_error", "error": str(frame.get("error") or "")},
                )
            ]
        if isinstance(model, str) and model:
            self.model = model
        mid = str(msg.get("id") or "")
        # The CLI gives whole messages an id; recorded messages without one are matched by their content.
        streamed = mid in self._streamed if mid else None
        out: list[Event] = []
        for b in blocks:
            if not isinstance(b, dict):
                continue
            bt = b.get("type")
            if bt == "tool_use":
                tool_id = str(b.get("id", ""))
                if tool_id in self._ended_tools:
                    continue
                name = str(b.get("name", ""))
                raw_args = b.get("input")
                args = raw_args if isinstance(raw_args, dict) else {}
                if tool_id not in self.tool_names:
                    out.append(ToolCall(id=tool_id, name=name, phase=Phase.START))
                out.extend(self._tool_end(tool_id, name, args))
            elif streamed or (streamed is None and self._was_streamed(b)):
                continue
            elif bt == "text":
                text = str(b.get("text", ""))
                out += [
                    TextDelta(message_id=mid, phase=Phase.START),
                    TextDelta(text=text, message_id=mid),
                    TextDelta(message_id=mid, phase=Phase.END),
                ]
                self._transcript(TranscriptItem(kind="text", text=text, model=self.model))
            elif bt in ("thinking", "redacted_thinking"):
                text = str(b.get("thinking") or b.get("text") or "")
                out += [
                    Thinking(message_id=mid, phase=Phase.START),
                    Thinking(text=text, message_id=mid),
                    Thinking(message_id=mid, phase=Phase.END),
                ]
                self._transcript(TranscriptItem(kind="thinking", text=text, model=self.model))
        return out

    def _was_streamed(self, block: dict[str, Any]) -> bool:
        bt = block.get("type")
        kind = "text" if bt == "text" else "thinking"
        text = str(block.get("text") if bt == "text" else (block.get("thinking") or block.get("text") or ""))
        if (kind, text) in self._streamed_blocks:
            return True
        return any(b.kind == kind and "".join(b.parts) == text for b in self.blocks.values())

    def user(self, frame: dict[str, Any]) -> list[Event]:
        """One ``user`` line that is not an echo of our own input: tool results or the CLI's own notes."""
        msg = frame.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        parent = frame.get("parent_tool_use_id")
        out: list[Event] = []
        if isinstance(content, list):
            for b in content:
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "tool_result":
                    out.extend(self._tool_result(b, frame, str(parent) if parent else ""))
                elif b.get("type") == "text" and not parent:
                    out.extend(self._user_note(str(b.get("text", "")), frame))
        elif isinstance(content, str) and not parent:
            out.extend(self._user_note(content, frame))
        return out

    def _user_note(self, text: str, frame: dict[str, Any]) -> list[Event]:
        code = f"{self.PREFIX}.synthetic_user" if frame.get("isSynthetic") else f"{self.PREFIX}.user_note"
        self._transcript(TranscriptItem(kind="user", text=text, metadata={"code": code}))
        return [Notice(kind=NoticeKind.LIFECYCLE.value, text=text, metadata={"code": code})]

    def _tool_result(self, block: dict[str, Any], frame: dict[str, Any], parent: str) -> list[Event]:
        tool_id = str(block.get("tool_use_id", ""))
        content = block.get("content")
        is_error = bool(block.get("is_error"))
        if parent:
            return [
                SubagentUpdate(
                    task=parent,
                    state="tool_result",
                    summary=_content_text(content)[:500],
                    kind=SubagentKind.STATE,
                    data={"tool_use_id": tool_id, "is_error": is_error},
                )
            ]
        self.open_tools.discard(tool_id)
        name = self.tool_names.get(tool_id, "")
        result: dict[str, Any] = {"content": content}
        extra = frame.get("tool_use_result")
        if extra is not None:
            result["tool_use_result"] = extra
        self._transcript(
            TranscriptItem(
                kind="tool_result",
                text=_content_text(content),
                tool_use_id=tool_id,
                tool_name=name,
                is_error=is_error,
                data={"tool_use_result": extra} if extra is not None else {},
            )
        )
        out: list[Event] = [ToolResult(id=tool_id, result=result, is_error=is_error, name=name)]
        out += self.activity.result(tool_id, content, is_error, extra)
        if tool_id in self._subagent_tools and tool_id not in self._finished_tasks:
            self._finished_tasks.add(tool_id)
            out.append(
                SubagentUpdate(
                    task=tool_id,
                    state="failed" if is_error else "completed",
                    summary=_content_text(content)[:500],
                    kind=SubagentKind.FINISHED,
                )
            )
        return out

    # -- subagents ---------------------------------------------------------------------------------------

    def _subagent_stream(self, parent: str, ev: dict[str, Any]) -> list[Event]:
        if ev.get("type") != "content_block_delta":
            return []
        delta = ev.get("delta")
        if isinstance(delta, dict) and delta.get("type") == "text_delta":
            return [SubagentUpdate(task=str(parent), kind=SubagentKind.DELTA, delta=str(delta.get("text", "")))]
        return []

    def _subagent_message(self, parent: str, blocks: list[Any]) -> list[Event]:
        out: list[Event] = []
        for b in blocks:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "text":
                out.append(SubagentUpdate(task=parent, kind=SubagentKind.MESSAGE, summary=str(b.get("text", ""))))
            elif b.get("type") == "tool_use":
                out.append(
                    SubagentUpdate(
                        task=parent,
                        state="tool_use",
                        summary=str(b.get("name", "")),
                        kind=SubagentKind.STATE,
                        data={"tool_use_id": b.get("id"), "tool": b.get("name"), "input": b.get("input")},
                    )
                )
        return out

    def _task_event(self, sub: str, frame: dict[str, Any]) -> list[Event]:
        related = str(frame.get("tool_use_id") or frame.get("parent_tool_use_id") or "")
        task_id = str(frame.get("task_id") or related)
        data = {k: v for k, v in frame.items() if k not in ("type", "uuid", "session_id")}
        if related not in self._subagent_tools and frame.get("task_type") != "local_agent":
            text = str(frame.get("description") or frame.get("summary") or sub)
            code = f"{self.PREFIX}.{sub}"
            return [Notice(kind=NoticeKind.LIFECYCLE, text=text, metadata={"code": code}, data=data)]
        task = related or task_id
        if sub == "task_started":
            return [
                SubagentUpdate(
                    task=task,
                    member=str(frame.get("subagent_type") or frame.get("agent_type") or ""),
                    state="running",
                    summary=str(frame.get("description") or ""),
                    kind=SubagentKind.STATE,
                    data=data,
                )
            ]
        if sub == "task_notification":
            status = str(frame.get("status") or "completed")
            self._finished_tasks.add(task)
            return [
                SubagentUpdate(
                    task=task,
                    state=status,
                    summary=str(frame.get("summary") or ""),
                    kind=SubagentKind.FINISHED,
                    data=data,
                )
            ]
        return [
            SubagentUpdate(
                task=task,
                state="running",
                summary=str(frame.get("description") or frame.get("summary") or ""),
                kind=SubagentKind.STATE,
                data=data,
            )
        ]

    # -- system lines ------------------------------------------------------------------------------------

    def system(self, frame: dict[str, Any]) -> list[Event]:
        """One ``system`` line: init, status, api_retry, task events, and others as notices."""
        sub = str(frame.get("subtype") or "")
        if sub == "init":
            self.inits += 1
            sid = str(frame.get("session_id") or "")
            model = frame.get("model")
            if isinstance(model, str):
                self.init_model = model
            if self.inits > 1 and sid == self.session_id:
                return []
            self.session_id = sid
            self._transcript(
                TranscriptItem(kind="init", session_id=sid, model=self.init_model, data={"cwd": frame.get("cwd")})
            )
            meta = {
                "code": f"{self.PREFIX}.init",
                "session_id": sid,
                "model": self.init_model,
                "permission_mode": str(frame.get("permissionMode") or ""),
                "version": str(frame.get(self.VERSION_KEY) or ""),
                "api_key_source": str(frame.get("apiKeySource") or ""),
            }
            data: dict[str, Any] = {
                k: frame[k] for k in ("cwd", "tools", "mcp_servers", "agents", "skills") if k in frame
            }
            return [Notice(kind=NoticeKind.INVOCATION, text=f"session {sid}", metadata=meta, data=data)]
        if sub in _QUIET_SYSTEM:
            return []
        if sub.startswith("task_"):
            return self._task_event(sub, frame)
        data = {k: v for k, v in frame.items() if k not in ("type", "subtype", "uuid", "session_id")}
        if sub == "api_retry":
            text = (
                f"API retry {frame.get('attempt')}/{frame.get('max_retries')} after HTTP "
                f"{frame.get('error_status')} (waiting {frame.get('retry_delay_ms')} ms)"
            )
        elif sub == "status":
            status = frame.get("status")
            if self.SKIP_EMPTY_STATUS and not status and not frame.get("permissionMode"):
                return []
            mode = frame.get("permissionMode")
            text = f"status: {status}" if status else f"permission mode: {mode}" if mode else "status"
        else:
            text = sub
        code = f"{self.PREFIX}.{sub}"
        return [Notice(kind=NoticeKind.LIFECYCLE, text=text, metadata={"code": code}, data=data)]

    def unknown(self, frame: dict[str, Any]) -> list[Event]:
        """A frame type this driver does not know; kept as a notice so nothing is silently lost."""
        kind = str(frame.get("type"))
        if kind in self.QUIET_FRAMES:
            return []
        if kind == "error":
            text = str(frame.get("message") or frame.get("error") or "error")
            self._transcript(TranscriptItem(kind="error", text=text, is_error=True, data=dict(frame)))
            return [Notice(kind=NoticeKind.LIFECYCLE.value, text=text, metadata={"code": f"{self.PREFIX}.error"})]
        return [
            Notice(
                kind=NoticeKind.LIFECYCLE.value,
                text=f"unrecognised {self.LABEL} frame type {kind!r}",
                metadata={"code": f"{self.PREFIX}.unknown_frame"},
                data={"frame": frame},
            )
        ]


__all__ = ["SUBAGENT_TOOLS", "ClaudeLikeResult", "ClaudeLikeTranslator", "parse_claude_like_result", "usage_of"]
