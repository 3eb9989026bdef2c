"""ACP ``session/update`` notifications (wire dicts, camelCase) -> adaptor_nb events, and the turn's record."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ...driver import (
    HOST_SERVER,
    CapabilityEnd,
    CapabilityStart,
    Event,
    HostedTools,
    Notice,
    Phase,
    PlanItem,
    PlanUpdate,
    TextDelta,
    Thinking,
    ToolCall,
    ToolResult,
    TranscriptItem,
    Usage,
    mark_host_tool,
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
    unnamed: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Calls of Qwen Code's ``tool_call`` whose tool is not named yet: their start waits for the name."""

    @property
    def text(self) -> str:
        return "".join(self.parts)


class Translator:
    """Turns one session's updates into events; ``record`` collects the turn's text, tools and usage."""

    def __init__(self, session_id: str, model: str = "", hosted: HostedTools | None = None) -> None:
        self.session_id = session_id
        self.model = model
        self.hosted = hosted
        self.record = TurnRecord()
        self.capabilities: dict[str, CapabilityStart] = {}

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
            return self._tool_start(_deferred(update))
        if kind == "tool_call_update":
            return self._tool_update(_deferred(update))
        if kind == "plan":
            return [_plan(update.get("entries"))]
        if kind in _STATE_UPDATES:
            return [Notice(kind=f"acp.{kind}", text=kind.replace("_", " "), data=_without_kind(update))]
        return []  # user_message_chunk (a replayed history) and unknown kinds carry nothing for the run

    def _tool_start(self, update: dict[str, Any]) -> list[Event]:
        call_id = str(update.get("toolCallId") or "")
        if _unnamed(update) and update.get("status") not in ("completed", "failed"):
            self.record.unnamed[call_id] = {**self.record.unnamed.get(call_id, {}), **update}
            return []
        if call_id in self.record.tools:  # announced already (by the permission request that introduced it)
            return self._tool_update(update)
        info = {k: update[k] for k in _TOOL_FIELDS if k in update}
        self.record.tools[call_id] = dict(info)
        name = self.tool_name(update)
        args = update.get("rawInput")
        self.record.items.append(
            TranscriptItem(kind="tool_use", tool_use_id=call_id, tool_name=name, input=args, session_id=self.session_id)
        )
        events: list[Event] = [
            mark_host_tool(
                ToolCall(id=call_id, name=name, args=args if isinstance(args, dict) else None, details=info),
                self.hosted,
            ),
            *self._mcp_start(call_id, update),
        ]
        if update.get("status") in ("completed", "failed"):
            events.extend(self._tool_end(call_id, update))
        return events

    def _tool_update(self, update: dict[str, Any]) -> list[Event]:
        call_id = str(update.get("toolCallId") or "")
        if call_id in self.record.unnamed:
            return self._tool_start({**self.record.unnamed.pop(call_id), **update})
        if call_id not in self.record.tools:  # an update before its tool_call (CodeBuddy streams the input first)
            return self._tool_start(update)
        known = self.record.tools.setdefault(call_id, {})
        known.update({k: update[k] for k in _TOOL_FIELDS if k in update})
        status = update.get("status")
        if status in ("completed", "failed"):
            return self._tool_end(call_id, update)
        args = update.get("rawInput")
        call = ToolCall(
            id=call_id,
            name=self.tool_name({**known, **update}),
            args=args if isinstance(args, dict) else None,
            phase=Phase.CONTENT,
            details=dict(known),
        )
        return [mark_host_tool(call, self.hosted)]

    def _tool_end(self, call_id: str, update: dict[str, Any]) -> list[Event]:
        known = self.record.tools.get(call_id, {})
        failed = update.get("status") == "failed"
        content = update.get("content", known.get("content")) or []
        text = "\n".join(_text(c.get("content")) for c in content if isinstance(c, dict) and c.get("type") == "content")
        result: dict[str, Any] = {"content": content, "text": text}
        if "rawOutput" in update:
            result["raw_output"] = update["rawOutput"]
        name = self.tool_name({**known, **update})
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
        end = mark_host_tool(
            ToolResult(id=call_id, result=result, is_error=failed, name=name, details=dict(known)), self.hosted
        )
        hosted = self.hosted
        if not failed and end.details.get("host_tool") and hosted is not None and hosted.failed is not None:
            # An agent may report a host tool's error answer as completed (CodeBuddy drops MCP's isError): the
            # host's own record of its error answers decides.
            end = replace(end, is_error=hosted.failed(end.name, text))
        out: list[Event] = [end]
        start = self.capabilities.pop(call_id, None)
        if start is not None:
            out.append(
                CapabilityEnd(kind="mcp_tool", name=start.name, scope=call_id, output=result, ok=not end.is_error)
            )
        return out

    def tool_name(self, update: dict[str, Any]) -> str:
        """The tool's name: a host tool's CLI name when the agent names one of the Agent's tools, else its own."""
        return host_tool_name(update, self.hosted) or _tool_name(update)

    def _mcp_start(self, call_id: str, update: dict[str, Any]) -> list[Event]:
        """A capability start for a call of an MCP server's tool (not a host tool), where the agent says it is one:
        ``rawInput`` naming ``server``, ``tool`` and ``arguments`` (codex-acp), or ``_meta.toolName`` ``mcp__s__t``."""
        raw = update.get("rawInput")
        meta = update.get("_meta")
        tool_name = meta.get("toolName") if isinstance(meta, dict) else None
        if isinstance(raw, dict) and isinstance(raw.get("server"), str) and isinstance(raw.get("tool"), str):
            server, tool, args = raw["server"], raw["tool"], raw.get("arguments")
        elif isinstance(tool_name, str) and tool_name.startswith("mcp__") and "__" in tool_name[5:]:
            server, _, tool = tool_name[5:].partition("__")
            args = raw
        else:
            return []
        if server == HOST_SERVER or call_id in self.capabilities or host_tool_name(update, self.hosted):
            return []
        start = CapabilityStart(kind="mcp_tool", name=f"{server}/{tool}", scope=call_id, input=args)
        self.capabilities[call_id] = start
        return [start]


def host_tool_name(update: dict[str, Any], hosted: HostedTools | None) -> str:
    """The CLI name (``mcp__<server>__<tool>``) of the host tool a tool call names, else "".

    Agents name an MCP tool in their own way: ``mcp__pytools__lookup`` (CodeBuddy, in the title), ``Tool:
    pytools/lookup`` (codex-acp, in the title); ``_meta.toolName`` is taken the same way."""
    if hosted is None:
        return ""
    meta = update.get("_meta")
    candidates = [meta.get("toolName") if isinstance(meta, dict) else None, update.get("title")]
    for raw in candidates:
        if not isinstance(raw, str):
            continue
        text = raw.removeprefix("Tool: ").strip()
        for name in (text, "mcp__" + text.replace("/", "__", 1)):
            if hosted.own_name(name) is not None:
                return name
    return ""


def _deferred(update: dict[str, Any]) -> dict[str, Any]:
    """A call of Qwen Code's ``tool_call`` tool (how its model calls deferred tools, MCP tools among them) as a
    call of the tool it names, with that tool's arguments."""
    meta = update.get("_meta")
    raw = update.get("rawInput")
    if not (isinstance(meta, dict) and meta.get("toolName") == "tool_call" and isinstance(raw, dict)):
        return update
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        return update
    return {**update, "_meta": {**meta, "toolName": name}, "rawInput": raw.get("arguments")}


def _unnamed(update: dict[str, Any]) -> bool:
    meta = update.get("_meta")
    return isinstance(meta, dict) and meta.get("toolName") == "tool_call"


def _plan(entries: Any) -> PlanUpdate:
    """An ACP plan (``entries`` of ``content``, ``status``, ``priority``): the whole plan each time."""
    items = tuple(
        PlanItem(
            text=str(e.get("content") or ""),
            status=str(e.get("status") or "pending"),  # type: ignore[arg-type]  # PlanItem maps other words
            priority=str(e["priority"]) if e.get("priority") is not None else None,
        )
        for e in (entries if isinstance(entries, list) else [])
        if isinstance(e, dict)
    )
    return PlanUpdate(items=items, source="acp.plan")


def _tool_name(update: dict[str, Any]) -> str:
    meta = update.get("_meta")
    if isinstance(meta, dict) and isinstance(meta.get("toolName"), str):
        return str(meta["toolName"])
    return str(update.get("kind") or update.get("title") or "tool")


def _without_kind(update: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in update.items() if k != "sessionUpdate"}


__all__ = ["Translator", "TurnRecord", "host_tool_name", "wire_usage"]
