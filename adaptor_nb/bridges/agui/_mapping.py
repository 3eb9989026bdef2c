"""adaptor_nb events onto AG-UI 1.0 events, built from ag-ui-protocol's own types.

One ``EventMapper`` follows one Stream across every AG-UI run that shows it, so message and tool-call ids are the
same in each. The AG-UI run frame (RUN_STARTED, the terminal event, interrupts) belongs to the caller: see
``_runframe.py``. Event types without a rule here pass through as CUSTOM events named ``adaptor_nb.<type>``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from ..._approvals import ApprovalRequest
from ..._enums import Phase, Role
from ..._events import Done, Event, RunFinished, TextDelta, Thinking, ToolCall, ToolResult, TurnEnd
from ..._result import Usage
from ._jsonsafe import json_safe

_START, _CONTENT, _END = Phase.START, Phase.CONTENT, Phase.END


def usage_state(usage: Usage | None) -> dict[str, int] | None:
    """The ``usage`` entry of the bridge's shared state."""
    if usage is None:
        return None
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "cachedInputTokens": usage.cached_input_tokens,
    }


def cost_state(usage: Usage | None) -> float | None:
    return None if usage is None else usage.cost_usd


class EventMapper:
    """Maps the events of one Stream; ``close()`` ends whatever is open when an AG-UI run ends before the Stream."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.state: dict[str, Any] = {"runId": run_id, "turns": 0, "usage": None, "costUsd": None}
        self._text: dict[str, str] = {}  # adaptor message id -> open AG-UI message id
        self._reasoning: dict[str, str] = {}
        self._tools: dict[str, bool] = {}  # open tool call id -> arguments streamed
        self._tool_names: dict[str, str] = {}
        self._tool_args: dict[str, list[str]] = {}  # argument deltas of open tool calls (replayed to late joiners)
        self._started_tools: set[str] = set()
        self._reuse: dict[str, int] = {}
        self._serial = 0

    # -- ids ------------------------------------------------------------------------------------------------

    def _fresh(self, base: str, kind: str) -> str:
        """A new AG-UI id for ``base`` (the adaptor id, or a per-run serial when it has none)."""
        if not base:
            self._serial += 1
            return f"{self.run_id}-{kind}-{self._serial}"
        n = self._reuse.get(f"{kind}:{base}", 0)
        self._reuse[f"{kind}:{base}"] = n + 1
        return base if n == 0 else f"{base}~{n}"

    # -- mapping --------------------------------------------------------------------------------------------

    def snapshot(self) -> StateSnapshotEvent:
        return StateSnapshotEvent(snapshot=dict(self.state), timestamp=now_ms())

    def map(self, event: Event) -> list[BaseEvent]:
        """The AG-UI events for ``event`` (none for Done and approval requests: the run frame handles those), stamped
        with the event's time in milliseconds."""
        out = self._map(event)
        stamp = event.meta.timestamp
        if stamp:
            ms = int(stamp * 1000)
            for ev in out:
                ev.timestamp = ms
        return out

    def _map(self, event: Event) -> list[BaseEvent]:
        tp = type(event)
        if tp is TextDelta:
            return self._text_delta(event)  # type: ignore[arg-type]
        if tp is Thinking:
            return self._thinking(event)  # type: ignore[arg-type]
        if tp is ToolCall:
            return self._tool_call(event)  # type: ignore[arg-type]
        if tp is ToolResult:
            return self._tool_result(event)  # type: ignore[arg-type]
        if tp is TurnEnd:
            return self._turn_end(event)  # type: ignore[arg-type]
        if tp is RunFinished:
            return self._run_finished(event)  # type: ignore[arg-type]
        if tp is Done or isinstance(event, ApprovalRequest):
            return []
        return [custom(event)]

    @property
    def open_text(self) -> dict[str, str]:
        """The open assistant messages: the driver's message id -> the AG-UI message id (the live dict, read-only)."""
        return self._text

    def delta(self, ev: TextDelta | Thinking | ToolCall) -> tuple[str, str, str] | None:
        """``(kind, id, text)`` when ``ev`` only adds text to an open message, reasoning block or tool call (the
        hot path: no event object is built until a client reads it, see ``delta_event``); None otherwise."""
        if ev.phase is not _CONTENT:
            return None
        tp = type(ev)
        if tp is TextDelta:
            text = ev.text  # type: ignore[union-attr]
            mid = self._text.get(ev.message_id)  # type: ignore[union-attr]
            if mid is None or not text or ev.role is not Role.ASSISTANT:  # type: ignore[union-attr]
                return None
            return ("text", mid, text)
        if tp is Thinking:
            text = ev.text  # type: ignore[union-attr]
            mid = self._reasoning.get(ev.message_id)  # type: ignore[union-attr]
            return None if mid is None or not text else ("reasoning", mid, text)
        tid = ev.id  # type: ignore[union-attr]
        text = ev.args_delta  # type: ignore[union-attr]
        if tid not in self._tools or not text:
            return None
        self._tools[tid] = True
        self._tool_args.setdefault(tid, []).append(text)
        return ("args", tid, text)

    def ending(self) -> list[BaseEvent]:
        """END events for everything open, without closing it here (an AG-UI run that ends while the Stream goes
        on closes what it showed)."""
        out: list[BaseEvent] = [TextMessageEndEvent(message_id=mid) for mid in self._text.values()]
        for mid in self._reasoning.values():
            out += [ReasoningMessageEndEvent(message_id=mid), ReasoningEndEvent(message_id=mid)]
        out += [ToolCallEndEvent(tool_call_id=tid) for tid in self._tools]
        return stamped(out)

    def close(self) -> list[BaseEvent]:
        """END events for every message, reasoning block and tool call still open (stamped now)."""
        out: list[BaseEvent] = [TextMessageEndEvent(message_id=mid) for mid in self._text.values()]
        for mid in self._reasoning.values():
            out += [ReasoningMessageEndEvent(message_id=mid), ReasoningEndEvent(message_id=mid)]
        out += [ToolCallEndEvent(tool_call_id=tid) for tid in self._tools]
        self._text.clear()
        self._reasoning.clear()
        self._tools.clear()
        self._tool_args.clear()
        return stamped(out)

    def _text_delta(self, ev: TextDelta) -> list[BaseEvent]:
        key = ev.message_id
        phase = ev.phase
        out: list[BaseEvent] = []
        mid = self._text.get(key)
        if phase is _END:
            if mid is not None:
                del self._text[key]
                if ev.text:
                    out.append(TextMessageContentEvent(message_id=mid, delta=ev.text))
                out.append(TextMessageEndEvent(message_id=mid))
            return out
        if mid is None:
            if phase is _CONTENT and not ev.text:
                return out
            mid = self._text[key] = self._fresh(key, "msg")
            out.append(TextMessageStartEvent(message_id=mid, role="user" if ev.role is Role.USER else "assistant"))
        if ev.text:
            out.append(TextMessageContentEvent(message_id=mid, delta=ev.text))
        return out

    def _thinking(self, ev: Thinking) -> list[BaseEvent]:
        key = ev.message_id
        out: list[BaseEvent] = []
        mid = self._reasoning.get(key)
        if ev.phase is _END:
            if mid is not None:
                del self._reasoning[key]
                if ev.text:
                    out.append(ReasoningMessageContentEvent(message_id=mid, delta=ev.text))
                out += [ReasoningMessageEndEvent(message_id=mid), ReasoningEndEvent(message_id=mid)]
            return out
        if mid is None:
            if ev.phase is _CONTENT and not ev.text:
                return out
            mid = self._reasoning[key] = self._fresh(key, "reasoning")
            out += [ReasoningStartEvent(message_id=mid), ReasoningMessageStartEvent(message_id=mid)]
        if ev.text:
            out.append(ReasoningMessageContentEvent(message_id=mid, delta=ev.text))
        return out

    def opening(self) -> list[BaseEvent]:
        """START events (and the arguments so far) for everything open: how a late AG-UI run joins the Stream."""
        out: list[BaseEvent] = [TextMessageStartEvent(message_id=mid, role="assistant") for mid in self._text.values()]
        for mid in self._reasoning.values():
            out += [ReasoningStartEvent(message_id=mid), ReasoningMessageStartEvent(message_id=mid)]
        for tid in self._tools:
            out.append(ToolCallStartEvent(tool_call_id=tid, tool_call_name=self._tool_names[tid]))
            args = "".join(self._tool_args.get(tid, ()))
            if args:
                out.append(ToolCallArgsEvent(tool_call_id=tid, delta=args))
        return stamped(out)

    def _open_tool(self, tool_id: str, name: str) -> list[BaseEvent]:
        self._tools[tool_id] = False
        self._started_tools.add(tool_id)
        self._tool_names[tool_id] = name = name or "tool"
        return [ToolCallStartEvent(tool_call_id=tool_id, tool_call_name=name)]

    def _args(self, tool_id: str, delta: str) -> ToolCallArgsEvent:
        self._tools[tool_id] = True
        self._tool_args.setdefault(tool_id, []).append(delta)
        return ToolCallArgsEvent(tool_call_id=tool_id, delta=delta)

    def _tool_call(self, ev: ToolCall) -> list[BaseEvent]:
        tid = ev.id
        out: list[BaseEvent] = []
        if tid not in self._tools:
            if tid in self._started_tools and ev.phase is not _START:
                return out  # already ended (e.g. at an interrupt): its result still follows
            out += self._open_tool(tid, ev.name)
        if ev.args_delta:
            out.append(self._args(tid, ev.args_delta))
        if ev.phase is _END:
            self._tool_args.pop(tid, None)
            if not self._tools.pop(tid) and ev.args is not None:
                out.append(ToolCallArgsEvent(tool_call_id=tid, delta=_dumps(ev.args)))
            out.append(ToolCallEndEvent(tool_call_id=tid))
        return out

    def _tool_result(self, ev: ToolResult) -> list[BaseEvent]:
        tid = ev.id
        out: list[BaseEvent] = []
        if tid not in self._started_tools:
            out += self._open_tool(tid, ev.name)
        if tid in self._tools:
            del self._tools[tid]
            self._tool_args.pop(tid, None)
            out.append(ToolCallEndEvent(tool_call_id=tid))
        out.append(
            ToolCallResultEvent(
                message_id=f"{tid}-result",
                tool_call_id=tid,
                content=_dumps(json_safe(ev.result)),
                role="tool",
                metadata={"isError": ev.is_error} if ev.is_error else None,
            )
        )
        return out

    def _turn_end(self, ev: TurnEnd) -> list[BaseEvent]:
        patch: list[dict[str, Any]] = [{"op": "replace", "path": "/turns", "value": ev.turn}]
        self.state["turns"] = ev.turn
        if ev.result is not None and ev.result.usage is not None:
            patch += self._usage_patch(ev.result.usage)
        return [_delta(patch), custom(ev)]

    def _run_finished(self, ev: RunFinished) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        if ev.usage is not None:
            out.append(_delta(self._usage_patch(ev.usage)))
        out.append(custom(ev))
        return out

    def _usage_patch(self, usage: Usage) -> list[dict[str, Any]]:
        self.state["usage"] = usage_state(usage)
        self.state["costUsd"] = cost_state(usage)
        return [
            {"op": "replace", "path": "/usage", "value": self.state["usage"]},
            {"op": "replace", "path": "/costUsd", "value": self.state["costUsd"]},
        ]


CUSTOM_PREFIX = "adaptor_nb."


def custom(event: Event) -> CustomEvent:
    """Any event as CUSTOM named ``adaptor_nb.<type>`` (``adaptor_nb.Notice``), its fields as JSON-safe data."""
    return CustomEvent(name=CUSTOM_PREFIX + type(event).__name__, value=json_safe(event))


def now_ms() -> int:
    return int(time.time() * 1000)


def stamped(events: list[BaseEvent]) -> list[BaseEvent]:
    """``events`` with the current time as their timestamp."""
    ms = now_ms()
    for ev in events:
        ev.timestamp = ms
    return events


DELTA_EVENTS = frozenset({"text", "reasoning", "args"})


def delta_event(kind: str, ident: str, text: str) -> BaseEvent:
    """The content event for ``EventMapper.delta``'s ``(kind, id, text)`` (merged deltas: their joined text)."""
    if kind == "text":
        event: BaseEvent = TextMessageContentEvent(message_id=ident, delta=text)
    elif kind == "reasoning":
        event = ReasoningMessageContentEvent(message_id=ident, delta=text)
    else:
        event = ToolCallArgsEvent(tool_call_id=ident, delta=text)
    event.timestamp = now_ms()
    return event


def _delta(patch: list[dict[str, Any]]) -> StateDeltaEvent:
    """A STATE_DELTA of RFC 6902 operations (validated by the protocol's own model)."""
    return StateDeltaEvent.model_validate({"delta": patch})


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)
