"""The run view's state, built from events: plain JSON-able dicts the front end renders (no widget code here)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from .._approvals import ApprovalRequest, Decision
from .._enums import MessageState, Phase, Role
from .._errors import RunCancelled
from .._events import (
    Done,
    Dropped,
    Event,
    MessageUpdate,
    Notice,
    PlanUpdate,
    ProcessInfo,
    RunFinished,
    RunStarted,
    SubagentUpdate,
    TextDelta,
    Thinking,
    ToolCall,
    ToolResult,
    TurnEnd,
)
from .._result import Result, Usage
from .._schema import parse_json_text
from ._words import PLAN_MARKS, failure_words, message_words
from ._workspace import header_fields

KEEP_CHARS = 20_000
"""Tool arguments and results longer than this are cut in the view (the Result keeps everything)."""

SHOWN_NOTICES = frozenset(
    {"lifecycle", "runtime", "limit.approaching", "thread.continuity", "thread.persistence", "thread.ownership"}
)
WARN_NOTICES = frozenset({"limit.approaching", "thread.continuity", "thread.persistence", "thread.ownership"})
TIMINGS = {"soon": "SOON", "after_turn": "AFTER_TURN", "interrupt": "INTERRUPT"}
_STATE_NAMES = {MessageState.ACCEPTED: "accepted", MessageState.DELIVERED: "delivered", MessageState.FAILED: "failed"}
TRAITS = ("header", "items", "live", "messages", "footer", "accepting")
INTERRUPTED = "interrupted (Kernel > Interrupt)"
"""The cancel cause of a run the user interrupted; the view reports it as interrupted, not cancelled."""


def _transient(event: Notice) -> bool:
    """A progress note that is stale a moment later (Claude's "status: requesting"): not worth an item."""
    return str(event.metadata.get("code", "")).endswith(".status")


def now_ms() -> int:
    """Wall-clock milliseconds (what the browser compares deadlines with)."""
    return int(time.time() * 1000)


def _clip(text: str) -> tuple[str, int]:
    if len(text) <= KEEP_CHARS:
        return text, 0
    return text[:KEEP_CHARS], len(text) - KEEP_CHARS


def _json(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _result_text(result: Mapping[str, Any] | None) -> str:
    """The readable part of a tool result: its text/output field when it has one, else the JSON."""
    if not result:
        return ""
    for key in ("output", "text", "content", "stdout", "error", "message"):
        value = result.get(key)
        if isinstance(value, str) and len(result) <= 3:
            return value
    return _json(dict(result))


def decision_outcome(decision: Decision | None, fallback: str = "") -> tuple[str, str]:
    """The card state and the sentence shown once a request is resolved."""
    if decision is None:
        return "expired", fallback or "expired without an answer"
    who = {"human": "", "policy": " by policy", "timeout": " (timed out)", "withdrawn": " (withdrawn)"}.get(
        decision.by, f" by {decision.by}"
    )
    if decision.action == "approve":
        return "approved", f"approved{who}"
    if decision.action == "answer":
        return "answered", f"answered{who}: {decision.answer}"
    state = "expired" if decision.by in ("timeout", "withdrawn") else "denied"
    return state, f"denied{who}" + (f": {decision.reason}" if decision.reason else "")


class RunState:
    """Everything the view shows, updated event by event; ``dirty`` names the traits to send next."""

    def __init__(
        self,
        *,
        driver: str,
        model: str = "",
        thread: str = "",
        note: str = "",
        messaging: bool = True,
        approval_note: str = "",
    ):
        self.approval_note = approval_note  # what each approval card says about its wait (no limit, headless)
        self.header: dict[str, Any] = {
            "driver": driver,
            "model": model,
            "thread": thread,
            "state": "starting",
            "note": note,
            "started_ms": now_ms(),
            "ended_ms": 0,
            "error": "",
        }
        self.items: list[dict[str, Any]] = []
        self._index: dict[str, dict[str, Any]] = {}
        self._chunks: dict[str, list[str]] = {}
        self._joined: dict[str, str] = {}
        self._synced: dict[str, int] = {}
        self.messages: list[dict[str, Any]] = []
        self._messages: dict[str, dict[str, Any]] = {}
        self.footer: dict[str, Any] = {}
        self.accepting = messaging
        self.approvals: dict[str, ApprovalRequest] = {}
        self._approval_items: dict[str, str] = {}
        self._approval_tools: dict[str, str] = {}  # request id -> the card of the tool it asks about
        self._unplaced: dict[str, str] = {}  # tool call id -> an approval card that came before its tool card
        self.dirty: set[str] = set(TRAITS)
        self.finished = False
        self.dropped = 0
        self._seq = 0
        self._text: str | None = None
        self._thinking: str | None = None
        self._tools: dict[str, str] = {}
        self._subagents: dict[str, str] = {}
        self._plan: str | None = None  # the run's one checklist, replaced by each plan revision
        self._turn = 1
        self.usage: Usage | None = None
        self.events = 0

    # -- items -----------------------------------------------------------------------------------------------

    def _new(self, kind: str, **fields: Any) -> dict[str, Any]:
        self._seq += 1
        item = {"id": f"{kind[0]}{self._seq}", "kind": kind, **fields}
        self.items.append(item)
        self._index[item["id"]] = item
        self.dirty.add("items")
        return item

    def _append(self, item_id: str, text: str) -> None:
        if not text:
            return
        self._chunks.setdefault(item_id, []).append(text)
        self.dirty.add("live")

    def live_text(self, item_id: str) -> str:
        """The streamed text of an item so far."""
        pending = self._chunks.get(item_id)
        if pending:
            self._joined[item_id] = self._joined.get(item_id, "") + "".join(pending)
            pending.clear()
        return self._joined.get(item_id, "")

    def _close(self, item_id: str | None, text: str | None = None) -> None:
        """Move an item's streamed text into the item itself (it stops changing)."""
        if item_id is None or item_id not in self._index:
            return
        item = self._index[item_id]
        streamed = self.live_text(item_id)
        self._chunks.pop(item_id, None)
        self._joined.pop(item_id, None)
        self._synced.pop(item_id, None)
        value = text if text is not None else streamed
        if item["kind"] == "tool":
            value, cut = _clip(value)
            if cut:
                item["truncated"] = item.get("truncated", 0) + cut
        item["text"] = value
        self.dirty.update(("items", "live"))

    def _close_text(self) -> None:
        self._close(self._text)
        self._text = None

    def _close_thinking(self) -> None:
        self._close(self._thinking)
        self._thinking = None

    # -- events ----------------------------------------------------------------------------------------------

    def apply(self, event: Event) -> None:
        """Fold one event into the state."""
        if self.stream_text(event):
            return
        self.events += 1
        if self.header["state"] == "starting" and not isinstance(event, Done):
            self._set_header(state="running")
        handler = getattr(self, f"_on_{type(event).__name__}", None)
        if handler is not None:
            handler(event)

    def stream_text(self, event: Event) -> bool:
        """The common case, kept short: a text delta that only adds to the open item of its role and message. True
        when it was folded; False for every other event (``apply`` folds those). It only appends to a list and adds
        to a set, so the view calls it on its loop without taking its lock (the loop is also where updates are read).
        """
        if type(event) is not TextDelta or event.phase is not Phase.CONTENT or not event.text or self._text is None:
            return False
        chunks = self._chunks.get(self._text)
        if chunks is None:
            return False
        current = self._index[self._text]
        if current["role"] != ("user" if event.role is Role.USER else "assistant") or (
            event.message_id and current["message_id"] != event.message_id
        ):
            return False
        self.events += 1
        chunks.append(event.text)
        self.dirty.add("live")
        return True

    def stream_texts(self, events: Sequence[Event], start: int) -> int:
        """``stream_text`` for ``events[start:]`` in turn, while it folds; returns the index it stopped at.

        For a batch of events read together: the open item is looked up once, not once per delta. Same locking
        rule as ``stream_text``.
        """
        if self._text is None:
            return start
        chunks = self._chunks.get(self._text)
        if chunks is None:
            return start
        current = self._index[self._text]
        user, message_id = current["role"] == "user", current["message_id"]
        append, content, role_user = chunks.append, Phase.CONTENT, Role.USER
        i, stop = start, len(events)
        while i < stop:
            event = events[i]
            if (
                type(event) is not TextDelta
                or event.phase is not content
                or not event.text
                or (event.role is role_user) is not user
                or (event.message_id and event.message_id != message_id)
            ):
                break
            append(event.text)
            i += 1
        if i > start:
            self.events += i - start
            self.dirty.add("live")
        return i

    def _set_header(self, **fields: Any) -> None:
        self.header.update(fields)
        self.dirty.add("header")

    def _on_RunStarted(self, event: RunStarted) -> None:
        self._set_header(state="running")

    def _on_TextDelta(self, event: TextDelta) -> None:
        if event.phase is Phase.END:
            self._close_text()
            return
        role = "user" if event.role is Role.USER else "assistant"
        current = self._index.get(self._text) if self._text else None
        fresh = (
            event.phase is Phase.START
            or current is None
            or current["role"] != role
            or (bool(event.message_id) and current["message_id"] not in ("", event.message_id))
        )
        if fresh:
            self._close_text()
            self._close_thinking()
            item = self._new("text", text="", role=role, message_id=event.message_id, turn=self._turn)
            self._text = item["id"]
        elif current is not None and not current["message_id"] and event.message_id:
            current["message_id"] = event.message_id
        assert self._text is not None
        self._append(self._text, event.text)

    def _on_Thinking(self, event: Thinking) -> None:
        if event.phase is Phase.END:
            self._close_thinking()
            return
        if self._thinking is None or event.phase is Phase.START:
            self._close_thinking()
            self._close_text()
            self._thinking = self._new("thinking", text="")["id"]
        self._append(self._thinking, event.text)

    def _tool_item(self, call_id: str, name: str) -> dict[str, Any]:
        item_id = self._tools.get(call_id) if call_id else None
        if item_id is not None:
            return self._index[item_id]
        self._close_text()
        self._close_thinking()
        item = self._new("tool", call_id=call_id, name=name, state="running", text="", result="")
        if call_id:
            self._tools[call_id] = item["id"]
            card_id = self._unplaced.pop(call_id, None)
            card = self._index.get(card_id) if card_id else None
            if card is not None:  # the request came first: the tool card goes right above it
                self.items.remove(item)
                self.items.insert(self.items.index(card), item)
                self._link(card, item)
        return item

    def _link(self, card: dict[str, Any], tool: dict[str, Any]) -> None:
        """Tie an approval card to its tool card: the tool waits while the request is pending."""
        self._approval_tools[card["request_id"]] = tool["id"]
        card["tool_item"] = tool["id"]
        if card["state"] == "pending":
            tool["state"] = "waiting"
        self.dirty.add("items")

    def _place_under(self, card: dict[str, Any], tool: dict[str, Any]) -> None:
        """Move ``card`` right under ``tool`` (after any earlier cards of the same tool)."""
        self.items.remove(card)
        at = self.items.index(tool) + 1
        while at < len(self.items) and self.items[at].get("tool_item") == tool["id"]:
            at += 1
        self.items.insert(at, card)

    def _on_ToolCall(self, event: ToolCall) -> None:
        item = self._tool_item(event.id, event.name)
        if event.details.get("host_tool") and not item.get("host_tool"):
            item["host_tool"] = True  # the view labels it a Python tool
        if event.name and item["name"] != event.name:
            item["name"] = event.name
            self.dirty.add("items")
        if event.phase is Phase.CONTENT:
            self._append(item["id"], event.args_delta)
        elif event.phase is Phase.END:
            self._close(item["id"], _json(event.args) if event.args is not None else None)
        elif event.args is not None:
            self._close(item["id"], _json(event.args))
        if event.result is not None:
            self._set_result(item, _result_text(event.result), False)

    def _set_result(self, item: dict[str, Any], text: str, is_error: bool, raw: Any = None) -> None:
        self.dirty.add("items")
        if item["state"] == "denied":
            if isinstance(raw, Mapping) and set(raw) <= {"denied"}:
                return  # the denial is said once, on its request's card
            is_error = True
        text, cut = _clip(text)
        item["result"] = text
        if cut:
            item["truncated"] = item.get("truncated", 0) + cut
        if item["state"] != "denied":
            item["state"] = "error" if is_error else "done"

    def _on_ToolResult(self, event: ToolResult) -> None:
        item = self._tool_item(event.id, event.name)
        if event.details.get("host_tool"):
            item["host_tool"] = True
        if item["id"] in self._chunks:
            self._close(item["id"])
        self._set_result(item, _result_text(event.result), event.is_error, event.result)

    def _on_SubagentUpdate(self, event: SubagentUpdate) -> None:
        key = event.task or event.member or "subagent"
        item_id = self._subagents.get(key)
        if item_id is None:
            item_id = self._new("subagent", task=event.task, member=event.member, state="", summary="", text="")["id"]
            self._subagents[key] = item_id
        item = self._index[item_id]
        for name in ("member", "state", "summary"):
            value = getattr(event, name)
            if value and item.get(name) != value:
                item[name] = value
                self.dirty.add("items")
        if event.kind.value == "finished" and not event.state:
            item["state"] = "finished"
            self.dirty.add("items")
        self._append(item_id, event.delta)

    def _on_PlanUpdate(self, event: PlanUpdate) -> None:
        entries = [
            {"text": i.text, "status": i.status, "mark": PLAN_MARKS.get(i.status, PLAN_MARKS["pending"])}
            for i in event.items
        ]
        fields = {
            "entries": entries,
            "revision": event.revision,
            "done": sum(1 for i in event.items if i.status == "completed"),
            "explanation": event.explanation,
        }
        item = self._index.get(self._plan) if self._plan else None
        if item is None:
            self._close_text()
            self._close_thinking()
            item = self._new("plan", text="", **fields)
            self._plan = item["id"]
        else:
            item.update(fields)
            self.dirty.add("items")

    def _on_Notice(self, event: Notice) -> None:
        if event.kind == "approval.resolved":
            self._approval_resolved(event.data)
            return
        self._note_model(event.metadata)
        if event.kind == "runtime" and (fields := header_fields(event.data)):
            self._set_header(**fields)
        if _transient(event):
            return
        if event.kind not in SHOWN_NOTICES or not event.text or event.text == self.header["note"]:
            return
        self._new("notice", level="warn" if event.kind in WARN_NOTICES else "info", text=event.text)

    def _on_ProcessInfo(self, event: ProcessInfo) -> None:
        self._note_model(event.metadata)

    def _note_model(self, metadata: Mapping[str, str]) -> None:
        """Show the model as soon as a start-up event names it, not only at the end."""
        model = metadata.get("model")
        if model and not self.header["model"]:
            self._set_header(model=model)

    def _on_Dropped(self, event: Dropped) -> None:
        self.dropped += event.count
        self._new("notice", level="warn", text=f"{event.count} streamed updates were dropped under load")

    def _on_MessageUpdate(self, event: MessageUpdate) -> None:
        entry = self._messages.get(event.id)
        if entry is None:
            entry = {"id": event.id, "text": event.text, "when": "soon", "state": ""}
            self._messages[event.id] = entry
            self.messages.append(entry)
        entry["state"] = _STATE_NAMES.get(event.state, str(event.state))
        entry["boundary"] = event.boundary
        entry["mechanism"] = event.mechanism
        entry["reason"] = event.reason.value
        if event.turn:
            entry["turn"] = event.turn
        entry["words"] = message_words(entry)
        if entry["state"] in ("delivered", "failed"):
            self._place_message(entry)
        self.dirty.add("messages")

    def _place_message(self, entry: dict[str, Any]) -> None:
        """Put a sent message into the transcript at the point it was delivered (or given up)."""
        item_id = entry.get("placed")
        if item_id and item_id in self._index:
            item = self._index[item_id]
            item.update(state=entry["state"], words=entry["words"])
            self.dirty.add("items")
            return
        self._close_text()
        self._close_thinking()
        item = self._new("message", message_id=entry["id"], text=entry["text"], state=entry["state"])
        item["words"] = entry["words"]
        entry["placed"] = item["id"]

    def _on_TurnEnd(self, event: TurnEnd) -> None:
        self._close_text()
        self._close_thinking()
        self._turn = max(self._turn, event.turn + 1)
        usage = event.result.usage if event.result is not None else None
        self.usage = Usage.add(self.usage, usage)
        self._set_footer(turns=event.turn, usage=self.usage, status="running")

    def _on_RunFinished(self, event: RunFinished) -> None:
        if event.usage is not None and self.usage is None:
            self.usage = event.usage

    def _on_ApprovalRequest(self, event: ApprovalRequest) -> None:
        self._close_text()
        self._close_thinking()
        details = event.details or {}
        tool = details.get("tool_name") or details.get("tool") or details.get("name") or ""
        args: Any = None
        for key in ("input", "args", "arguments", "command", "parameters", "plan"):
            if key in details:
                args = details[key]
                break
        diff = details.get("diff") or details.get("patch") or ""
        text, _ = _clip(_json(args))
        item = self._new(
            "approval",
            request_id=event.id,
            akind=event.kind.value,
            title=event.title,
            tool=str(tool),
            args=text,
            diff=_clip(_json(diff))[0],
            choices=[{"key": c.key, "label": c.label, "description": c.description} for c in event.choices],
            deadline_ms=int(event.deadline.timestamp() * 1000) if event.deadline else 0,
            wait=self.approval_note,
            state="pending",
            outcome="",
            error="",
        )
        self.approvals[event.id] = event
        self._approval_items[event.id] = item["id"]
        tool_id = self._tools.get(event.tool_call_id) if event.tool_call_id else None
        tool_item = self._index.get(tool_id) if tool_id else None
        if tool_item is not None:
            self._place_under(item, tool_item)
            self._link(item, tool_item)
        elif event.tool_call_id:
            self._unplaced[event.tool_call_id] = item["id"]
        self._set_header(state="waiting")
        if event.state != "pending":
            self.settle_approval(event.id)

    def approval_item(self, request_id: str) -> dict[str, Any] | None:
        """The card of a request, if the view has one."""
        item_id = self._approval_items.get(request_id)
        return self._index.get(item_id) if item_id else None

    def settle_approval(self, request_id: str, error: str = "") -> None:
        """Refresh a card from its request's responder (after a click, a timeout or the run's end)."""
        item = self.approval_item(request_id)
        request = self.approvals.get(request_id)
        if item is None or request is None:
            return
        if error:
            item["error"] = error
        if request.state != "pending":
            item["state"], item["outcome"] = decision_outcome(request.decision)
            self._after_decision(request_id, item["state"])
        self.dirty.add("items")
        if not any(i["state"] == "pending" for i in self.items if i["kind"] == "approval") and not self.finished:
            self._set_header(state="running")

    def _after_decision(self, request_id: str, card_state: str) -> None:
        """The tool of a settled request stops waiting: it runs on, or it was denied."""
        tool_id = self._approval_tools.get(request_id)
        tool = self._index.get(tool_id) if tool_id else None
        if tool is None or tool["state"] not in ("waiting", "running"):
            return
        tool["state"] = "running" if card_state in ("approved", "answered") else "denied"

    def _approval_resolved(self, data: Mapping[str, Any]) -> None:
        request_id = str(data.get("request_id", ""))
        if self.approval_item(request_id) is None:
            outcome = str(data.get("outcome", ""))
            by = str(data.get("by", ""))
            item = self._new(
                "approval",
                request_id=request_id,
                akind=str(data.get("kind", "permission")),
                title=str(data.get("title", "")),
                tool="",
                args="",
                diff="",
                choices=[],
                deadline_ms=0,
                state="approved" if outcome == "approved" else "denied",
                outcome=f"{outcome} by {by}" if by and by != "human" else outcome,
                error="",
            )
            self._approval_items[request_id] = item["id"]
            tool_id = self._tools.get(str(data.get("tool_call_id") or ""))
            tool = self._index.get(tool_id) if tool_id else None
            if tool is not None:
                self._place_under(item, tool)
                self._link(item, tool)
                self._after_decision(request_id, item["state"])
            return
        if request_id in self.approvals:
            self.settle_approval(request_id)

    # -- messages from the view ------------------------------------------------------------------------------

    def add_message(self, message_id: str, text: str, when: str) -> dict[str, Any]:
        """Record a message typed in the view, before the run admits it."""
        entry = self._messages.get(message_id)
        if entry is None:
            entry = {"id": message_id, "text": text, "when": when, "state": "sending"}
            entry["words"] = message_words(entry)
            self._messages[message_id] = entry
            self.messages.append(entry)
        self.dirty.add("messages")
        return entry

    def message_result(self, message_id: str, error: str = "") -> None:
        """The run admitted (or refused) a message sent from the view."""
        entry = self._messages.get(message_id)
        if entry is None:
            return
        if error:
            entry["state"] = "failed"
            entry["reason"] = error
        elif entry["state"] == "sending":
            entry["state"] = "accepted"
        entry["words"] = message_words(entry)
        if entry["state"] == "failed":
            self._place_message(entry)
        self.dirty.add("messages")

    # -- the end ---------------------------------------------------------------------------------------------

    def _set_footer(self, *, turns: int, usage: Usage | None, status: str, duration: float | None = None) -> None:
        footer: dict[str, Any] = {"turns": turns, "status": status}
        if usage is not None:
            footer.update(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cached_input_tokens=usage.cached_input_tokens,
                cost_usd=usage.cost_usd,
            )
        if duration is not None:
            footer["duration"] = round(duration, 3)
        self.footer = footer
        self.dirty.add("footer")

    def _on_Done(self, event: Done) -> None:
        self.finish(event.result, event.err)

    def finish(self, result: Result | None, err: BaseException | None) -> None:
        """Freeze the final state: close streams, settle cards, fill the footer."""
        if self.finished:
            return
        self.finished = True
        for item_id in list(self._chunks):
            self._close(item_id)
        self._text = self._thinking = None
        if err is None and result is not None and self.dropped:
            self._repair_text(result.text)
        for request_id in list(self.approvals):
            self.settle_approval(request_id)
        for item in self.items:
            if item["kind"] == "approval" and item["state"] == "pending":
                item["state"], item["outcome"] = "expired", "expired when the run ended"
            if item["kind"] == "tool" and item["state"] in ("running", "waiting"):
                item["state"] = "done" if err is None else "error"
        for entry in self.messages:
            if entry["state"] in ("sending", "accepted"):
                entry["state"] = "failed"
                entry["reason"] = entry.get("reason") or "the run ended first"
                entry["words"] = message_words(entry)
                self._place_message(entry)
        partial = result if result is not None else getattr(err, "result", None)
        if result is not None and err is None:
            self._show_structured(result)
        if isinstance(err, RunCancelled) and err.message == INTERRUPTED:
            state = "interrupted"
        elif isinstance(err, RunCancelled) or (err is not None and type(err).__name__ == "CancelledError"):
            state = "cancelled"
        elif err is not None:
            state = "failed"
        else:
            state = "done"
        ended = now_ms()
        duration = partial.duration if isinstance(partial, Result) and partial.duration else None
        if duration is None:
            duration = (ended - self.header["started_ms"]) / 1000
        else:  # the header's elapsed time and the footer's duration are one figure: the Result's
            ended = self.header["started_ms"] + round(duration * 1000)
        usage = partial.usage if isinstance(partial, Result) else self.usage
        turns = partial.turns if isinstance(partial, Result) else int(self.footer.get("turns", 0))
        model = partial.model if isinstance(partial, Result) and partial.model else self.header["model"]
        error = ""
        if state == "interrupted":
            error = f"{INTERRUPTED}: the run was stopped; what it did so far is kept"
        elif err is not None:
            error = failure_words(err)
        if error:
            self._drop_repeated(error)
        self._set_header(state=state, ended_ms=ended, error=error, model=model)
        self._set_footer(turns=turns, usage=usage, status=state, duration=duration)
        self.accepting = False
        self.dirty.update(("items", "live", "messages", "accepting"))

    def _drop_repeated(self, error: str) -> None:
        """Remove notices that only repeat the run's error (shown once, in the header's failure line)."""
        repeats = [i for i in self.items if i["kind"] == "notice" and i["text"] and i["text"] in error]
        for item in repeats:
            self.items.remove(item)
            self._index.pop(item["id"], None)

    def _show_structured(self, result: Result) -> None:
        """Show a structured answer as the value itself (not a provider's {"items": [...]} wrapper)."""
        if not getattr(result, "_has_structured", False):
            return
        texts = [i for i in self.items if i["kind"] == "text" and i["role"] == "assistant"]
        if not texts:
            return
        try:
            parse_json_text(texts[-1]["text"])
        except ValueError:
            return
        body = json.dumps(result.structured, indent=2, ensure_ascii=False, default=str)
        texts[-1]["text"] = f"```json\n{body}\n```"

    def _repair_text(self, final: str) -> None:
        """After dropped deltas, make the last turn's text exactly the result's text."""
        last_turn = [i for i in self.items if i["kind"] == "text" and i["role"] == "assistant"]
        if not last_turn or not final:
            return
        turn = last_turn[-1]["turn"]
        parts = [i for i in last_turn if i["turn"] == turn]
        if "".join(i["text"] for i in parts) == final:
            return
        parts[0]["text"] = final
        for extra in parts[1:]:
            self.items.remove(extra)
            self._index.pop(extra["id"], None)

    # -- snapshots -------------------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The changed traits as fresh JSON-able values, and clear ``dirty``."""
        out: dict[str, Any] = {}
        for name in self.dirty:
            if name == "items":
                out["items"] = [dict(i) for i in self.items]
            elif name == "live":
                out["live"] = {item_id: self.live_text(item_id) for item_id in list(self._chunks)}
                self._synced = {item_id: len(text) for item_id, text in out["live"].items()}
            elif name == "messages":
                out["messages"] = [dict(m) for m in self.messages]
            elif name == "header":
                out["header"] = dict(self.header)
            elif name == "footer":
                out["footer"] = dict(self.footer)
            elif name == "accepting":
                out["accepting"] = self.accepting
        self.dirty.clear()
        return out

    def only_appends(self) -> bool:
        """True when the only change since the last send is text appended to open items."""
        return self.dirty == {"live"}

    def take_appends(self) -> dict[str, list[Any]]:
        """The text appended to each open item since the last send, as ``{id: [offset, text]}``; clears ``dirty``."""
        out: dict[str, list[Any]] = {}
        for item_id in list(self._chunks):
            text = self.live_text(item_id)
            offset = self._synced.get(item_id, 0)
            if len(text) > offset:
                out[item_id] = [offset, text[offset:]]
                self._synced[item_id] = len(text)
        self.dirty.clear()
        return out

    def final_text(self) -> str:
        """All assistant text shown, in order (used by tests and the benchmark)."""
        return "".join(
            (i["text"] or self.live_text(i["id"]))
            for i in self.items
            if i["kind"] == "text" and i["role"] == "assistant"
        )
