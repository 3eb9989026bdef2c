"""ACP ``session/update`` notifications (wire dicts, camelCase) -> adaptor_nb events, and the turn's record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...driver import (
    Event,
    Notice,
    Phase,
    TextDelta,
    Thinking,
    ToolCall,
    ToolResult,
    TranscriptItem,
    Usage,
)

# Updates that carry session state rather than turn output: published as Notices named after the update.
_STATE_UPDATES = frozenset(
    {"available_commands_update", "current_mode_update", "config_option_update", "session_info_update", "usage_update"}
)
_TOOL_FIELDS = ("kind", "status", "title", "locations", "content")


def _text(content: Any) -> str:
    """The text of one ACP content block (other block kinds carry no text)."""
    if isinstance(content, dict) and content.get("type") == "text":
        return str(content.get("text") or "")
    return ""


def wire_usage(raw: Any) -> Usage | None:
    """ACP usage (``inputTokens``, ``outputTokens``, ``cachedReadTokens``) as a Usage, None when absent."""
    if not isinstance(raw, dict):
        return None
    try:
        return Usage(
            input_tokens=int(raw.get("inputTokens") or 0),
            output_tokens=int(raw.get("outputTokens") or 0),
            cached_input_tokens=int(raw.get("cachedReadTokens") or 0),
        )
    except (TypeError, ValueError):
        return None


@dataclass
class TurnRecord:
    """What one prompt turn produced so far: its text, the tools it called and the last usage reported."""

    parts: list[str] = field(default_factory=list)
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    usage: Usage | None = None
    items: list[TranscriptItem] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.parts)


class Translator:
    """Turns one session's updates into events; ``record`` collects the turn's text, tools and usage."""

    def __init__(self, session_id: str, model: str = "") -> None:
        self.session_id = session_id
        self.model = model
        self.record = TurnRecord()

    def new_turn(self) -> None:
        self.record = TurnRecord()

    def events(self, update: dict[str, Any]) -> list[Event]:
        kind = str(update.get("sessionUpdate") or "")
        meta = update.get("_meta")
        if isinstance(meta, dict):
            usage = wire_usage(meta.get("usage"))
            if usage is not None:
                self.record.usage = usage
        if kind == "agent_message_chunk":
            text = _text(update.get("content"))
            if not text:
                return []
            self.record.parts.append(text)
            return [TextDelta(text=text)]
        if kind == "agent_thought_chunk":
            text = _text(update.get("content"))
            return [Thinking(text=text)] if text else []
        if kind == "tool_call":
            return self._tool_start(update)
        if kind == "tool_call_update":
            return self._tool_update(update)
        if kind == "plan":
            entries = update.get("entries") or []
            lines = [f"[{e.get('status', '')}] {e.get('content', '')}" for e in entries if isinstance(e, dict)]
            return [Notice(kind="acp.plan", text="\n".join(lines), data={"entries": entries})]
        if kind in _STATE_UPDATES:
            return [Notice(kind=f"acp.{kind}", text=kind.replace("_", " "), data=_without_kind(update))]
        return []  # user_message_chunk (a replayed history) and unknown kinds carry nothing for the run

    def _tool_start(self, update: dict[str, Any]) -> list[Event]:
        call_id = str(update.get("toolCallId") or "")
        if call_id in self.record.tools:  # announced already (by the permission request that introduced it)
            return self._tool_update(update)
        info = {k: update[k] for k in _TOOL_FIELDS if k in update}
        self.record.tools[call_id] = dict(info)
        name = _tool_name(update)
        args = update.get("rawInput")
        self.record.items.append(
            TranscriptItem(kind="tool_use", tool_use_id=call_id, tool_name=name, input=args, session_id=self.session_id)
        )
        events: list[Event] = [
            ToolCall(id=call_id, name=name, args=args if isinstance(args, dict) else None, details=info)
        ]
        if update.get("status") in ("completed", "failed"):
            events.extend(self._tool_end(call_id, update))
        return events

    def _tool_update(self, update: dict[str, Any]) -> list[Event]:
        call_id = str(update.get("toolCallId") or "")
        known = self.record.tools.setdefault(call_id, {})
        known.update({k: update[k] for k in _TOOL_FIELDS if k in update})
        status = update.get("status")
        if status in ("completed", "failed"):
            return self._tool_end(call_id, update)
        args = update.get("rawInput")
        return [
            ToolCall(
                id=call_id,
                name=_tool_name({**known, **update}),
                args=args if isinstance(args, dict) else None,
                phase=Phase.CONTENT,
                details=dict(known),
            )
        ]

    def _tool_end(self, call_id: str, update: dict[str, Any]) -> list[Event]:
        known = self.record.tools.get(call_id, {})
        failed = update.get("status") == "failed"
        content = update.get("content", known.get("content")) or []
        text = "\n".join(_text(c.get("content")) for c in content if isinstance(c, dict) and c.get("type") == "content")
        result: dict[str, Any] = {"content": content, "text": text}
        if "rawOutput" in update:
            result["raw_output"] = update["rawOutput"]
        name = _tool_name({**known, **update})
        self.record.items.append(
            TranscriptItem(
                kind="tool_result",
                tool_use_id=call_id,
                tool_name=name,
                text=text,
                is_error=failed,
                session_id=self.session_id,
            )
        )
        return [ToolResult(id=call_id, result=result, is_error=failed, name=name, details=dict(known))]


def _tool_name(update: dict[str, Any]) -> str:
    meta = update.get("_meta")
    if isinstance(meta, dict) and isinstance(meta.get("toolName"), str):
        return str(meta["toolName"])
    return str(update.get("kind") or update.get("title") or "tool")


def _without_kind(update: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in update.items() if k != "sessionUpdate"}


__all__ = ["Translator", "TurnRecord", "wire_usage"]
