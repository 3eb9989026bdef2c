"""Maps app-server notifications of one turn to adaptor events, transcript items and the turn's text and usage."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...driver import (
    HOST_SERVER,
    CapabilityEnd,
    CapabilityStart,
    Event,
    Notice,
    NoticeKind,
    Phase,
    PlanItem,
    PlanUpdate,
    SubagentKind,
    SubagentUpdate,
    TextDelta,
    Thinking,
    ToolCall,
    ToolResult,
    TranscriptItem,
    Usage,
)

Output = Event | TranscriptItem

_WARNINGS = {"warning", "configWarning", "deprecationNotice", "guardianWarning"}
_FAILED = {"failed", "declined"}


@dataclass
class ToolInfo:
    """What a started tool item looked like, kept for its result and for approval titles."""

    name: str
    args: dict[str, Any]


@dataclass
class TurnState:
    """What one turn produced so far."""

    turn_id: str = ""
    text: str = ""
    usage: Usage | None = None
    error: dict[str, Any] | None = None
    agent_messages: int = 0


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return Usage(
        input_tokens=int(raw.get("inputTokens") or 0),
        output_tokens=int(raw.get("outputTokens") or 0),
        cached_input_tokens=int(raw.get("cachedInputTokens") or 0),
    )


def _tool(item: dict[str, Any]) -> ToolInfo | None:
    """The tool name and arguments of a tool-like thread item, or None for other items."""
    kind = item.get("type")
    if kind == "commandExecution":
        args = {"command": item.get("command", ""), "cwd": item.get("cwd", "")}
        if item.get("commandActions"):
            args["actions"] = item["commandActions"]
        return ToolInfo("exec_command", args)
    if kind == "fileChange":
        changes = [
            {"path": c.get("path", ""), "kind": (c.get("kind") or {}).get("type", ""), "diff": c.get("diff", "")}
            for c in item.get("changes") or []
            if isinstance(c, dict)
        ]
        return ToolInfo("apply_patch", {"changes": changes})
    if kind == "mcpToolCall":
        arguments = item.get("arguments")
        args = arguments if isinstance(arguments, dict) else {"arguments": arguments}
        return ToolInfo(f"mcp__{item.get('server', '')}__{item.get('tool', '')}", args)
    if kind == "dynamicToolCall":
        arguments = item.get("arguments")
        args = arguments if isinstance(arguments, dict) else {"arguments": arguments}
        return ToolInfo(str(item.get("tool", "dynamic_tool")), args)
    if kind == "webSearch":
        return ToolInfo("web_search", {"query": item.get("query", "")})
    if kind == "imageView":
        return ToolInfo("view_image", {"path": item.get("path", "")})
    return None


def _tool_result(item: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    kind = item.get("type")
    status = str(item.get("status") or "completed")
    if kind == "commandExecution":
        exit_code = item.get("exitCode")
        result = {
            "status": status,
            "exit_code": exit_code,
            "output": item.get("aggregatedOutput") or "",
            "duration_ms": item.get("durationMs"),
        }
        return result, status in _FAILED or (isinstance(exit_code, int) and exit_code != 0)
    if kind == "fileChange":
        paths = [c.get("path", "") for c in item.get("changes") or [] if isinstance(c, dict)]
        return {"status": status, "paths": paths}, status in _FAILED
    if kind == "mcpToolCall":
        error = item.get("error")
        return {"status": status, "result": item.get("result"), "error": error}, status in _FAILED or bool(error)
    if kind == "dynamicToolCall":
        ok = item.get("success")
        return {"status": status, "content": item.get("contentItems"), "success": ok}, ok is False
    if kind == "webSearch":
        return {"status": status, "query": item.get("query", ""), "action": item.get("action")}, False
    return {"status": status}, status in _FAILED


def _plan_text(plan: list[Any], explanation: Any) -> str:
    marks = {"completed": "[x]", "inProgress": "[~]", "pending": "[ ]"}
    lines = [str(explanation)] if explanation else []
    for step in plan:
        if isinstance(step, dict):
            lines.append(f"{marks.get(str(step.get('status')), '[ ]')} {step.get('step', '')}")
    return "\n".join(lines)


def _plan_update(plan: list[Any], explanation: Any) -> PlanUpdate:
    items = tuple(
        PlanItem(text=str(s.get("step") or ""), status=str(s.get("status") or "pending"))  # type: ignore[arg-type]
        for s in plan
        if isinstance(s, dict)
    )
    return PlanUpdate(items=items, source="codex.plan", explanation=str(explanation or ""))


def _capability(item: dict[str, Any]) -> CapabilityStart | None:
    """The capability a started tool item uses: web search, or a tool of an MCP server (not the host tools)."""
    kind = item.get("type")
    scope = str(item.get("id", ""))
    if kind == "webSearch":
        return CapabilityStart(
            kind="web_search", name="web_search", scope=scope, input={"query": item.get("query", "")}
        )
    if kind == "mcpToolCall" and item.get("server") != HOST_SERVER:
        name = f"{item.get('server', '')}/{item.get('tool', '')}"
        return CapabilityStart(kind="mcp_tool", name=name, scope=scope, input=item.get("arguments"))
    return None


@dataclass
class TurnMapper:
    """Translates the notifications of a turn; one mapper lives as long as the run (tools may span turns)."""

    state: TurnState = field(default_factory=TurnState)
    tools: dict[str, ToolInfo] = field(default_factory=dict)
    capabilities: dict[str, CapabilityStart] = field(default_factory=dict)
    _streamed: dict[str, bool] = field(default_factory=dict)

    def begin_turn(self, turn_id: str) -> None:
        self.state = TurnState(turn_id=turn_id)

    def map(self, method: str, params: dict[str, Any]) -> list[Output]:
        """The events and transcript items one notification stands for (often none)."""
        if method == "item/agentMessage/delta":
            item_id = str(params.get("itemId", ""))
            self._streamed[item_id] = True
            return [TextDelta(text=str(params.get("delta", "")), message_id=item_id)]
        if method in ("item/reasoning/summaryTextDelta", "item/reasoning/textDelta"):
            item_id = str(params.get("itemId", ""))
            self._streamed[item_id] = True
            return [Thinking(text=str(params.get("delta", "")), message_id=item_id)]
        if method == "item/started":
            return self._started(as_dict(params.get("item")))
        if method == "item/completed":
            return self._completed(as_dict(params.get("item")))
        if method == "item/commandExecution/outputDelta":
            item_id = str(params.get("itemId", ""))
            return [
                ToolCall(
                    id=item_id,
                    name="exec_command",
                    phase=Phase.CONTENT,
                    result={"output_delta": str(params.get("delta", ""))},
                )
            ]
        if method == "thread/tokenUsage/updated":
            if params.get("turnId") == self.state.turn_id:
                last = _usage((params.get("tokenUsage") or {}).get("last"))
                self.state.usage = Usage.add(self.state.usage, last)
            return []
        if method == "turn/plan/updated":
            plan = as_list(params.get("plan"))
            text = _plan_text(plan, params.get("explanation"))
            return [
                Notice(kind="plan", text=text, data={"plan": plan, "explanation": params.get("explanation")}),
                _plan_update(plan, params.get("explanation")),
            ]
        if method == "turn/diff/updated":
            return [
                Notice(
                    kind=NoticeKind.LIFECYCLE.value,
                    text="turn diff updated",
                    metadata={"code": "codex_turn_diff"},
                    data={"diff": params.get("diff", "")},
                )
            ]
        if method == "item/mcpToolCall/progress":
            return [
                Notice(
                    kind=NoticeKind.STEP.value,
                    text=str(params.get("message", "")),
                    data={"phase": "progress", "tool_call_id": params.get("itemId", "")},
                )
            ]
        if method == "error":
            error = as_dict(params.get("error"))
            if params.get("willRetry"):
                return [
                    Notice(
                        kind=NoticeKind.LIFECYCLE.value,
                        text=str(error.get("message", "")),
                        metadata={"code": "codex_retry"},
                        data={"error": error},
                    )
                ]
            if params.get("turnId") in (None, self.state.turn_id):
                self.state.error = error
            return []
        if method in _WARNINGS:
            text = params.get("message") or params.get("summary") or ""
            return [
                Notice(
                    kind=NoticeKind.LIFECYCLE.value,
                    text=str(text),
                    metadata={"code": "codex_warning"},
                    data={"method": method},
                )
            ]
        if method in ("model/rerouted", "thread/compacted"):
            return [
                Notice(
                    kind=NoticeKind.LIFECYCLE.value,
                    text=method,
                    metadata={"code": "codex_" + method.split("/")[-1]},
                    data=dict(params),
                )
            ]
        return []

    def _started(self, item: dict[str, Any]) -> list[Output]:
        kind = item.get("type")
        item_id = str(item.get("id", ""))
        if kind == "agentMessage":
            return [TextDelta(message_id=item_id, phase=Phase.START)]
        if kind == "reasoning":
            return [Thinking(message_id=item_id, phase=Phase.START)]
        if kind == "collabAgentToolCall":
            return [self._subagent(item, SubagentKind.STARTED)]
        info = _tool(item)
        if info is None:
            return []
        self.tools[item_id] = info
        return [
            ToolCall(id=item_id, name=info.name, args=info.args, phase=Phase.START),
            ToolCall(id=item_id, name=info.name, args=info.args, phase=Phase.END),
            TranscriptItem(kind="tool_use", tool_use_id=item_id, tool_name=info.name, input=info.args),
            *self._capability_start(item),
        ]

    def _capability_start(self, item: dict[str, Any]) -> list[Output]:
        start = _capability(item)
        if start is None or start.scope in self.capabilities:
            return []
        self.capabilities[start.scope] = start
        return [start]

    def _completed(self, item: dict[str, Any]) -> list[Output]:
        kind = item.get("type")
        item_id = str(item.get("id", ""))
        out: list[Output] = []
        if kind == "agentMessage":
            text = str(item.get("text") or "")
            if text and not self._streamed.pop(item_id, False):
                out.append(TextDelta(text=text, message_id=item_id))
            self.state.text = text
            self.state.agent_messages += 1
            out.append(TextDelta(message_id=item_id, phase=Phase.END))
            out.append(TranscriptItem(kind="text", text=text, metadata={"item_id": item_id}))
            return out
        if kind == "reasoning":
            parts = item.get("summary") or item.get("content") or []
            text = "\n\n".join(str(p) for p in parts)
            if text and not self._streamed.pop(item_id, False):
                out.append(Thinking(text=text, message_id=item_id))
            out.append(Thinking(message_id=item_id, phase=Phase.END))
            out.append(TranscriptItem(kind="thinking", text=text, metadata={"item_id": item_id}))
            return out
        if kind == "collabAgentToolCall":
            return [self._subagent(item, SubagentKind.FINISHED)]
        info = self.tools.get(item_id)
        if info is None:
            info = _tool(item)
            if info is None:
                return []
            self.tools[item_id] = info
            out += [
                ToolCall(id=item_id, name=info.name, args=info.args, phase=Phase.START),
                ToolCall(id=item_id, name=info.name, args=info.args, phase=Phase.END),
                *self._capability_start(item),
            ]
        result, is_error = _tool_result(item)
        out.append(ToolResult(id=item_id, name=info.name, result=result, is_error=is_error))
        start = self.capabilities.pop(item_id, None)
        if start is not None:
            out.append(CapabilityEnd(kind=start.kind, name=start.name, scope=item_id, output=result, ok=not is_error))
        output = result.get("output")
        text = output if isinstance(output, str) else json.dumps(result, default=str)
        out.append(
            TranscriptItem(
                kind="tool_result",
                tool_use_id=item_id,
                tool_name=info.name,
                text=str(text),
                is_error=is_error,
                data=result,
            )
        )
        return out

    @staticmethod
    def _subagent(item: dict[str, Any], kind: SubagentKind) -> SubagentUpdate:
        receivers = [str(r) for r in item.get("receiverThreadIds") or []]
        return SubagentUpdate(
            task=str(item.get("tool", "")),
            member=",".join(receivers),
            state=str(item.get("status", "")),
            summary=str(item.get("prompt") or ""),
            kind=kind,
            data={"sender_thread_id": item.get("senderThreadId"), "agents_states": item.get("agentsStates")},
        )
