"""Claude-like tool calls that are plans or capability use: TodoWrite, Task/Agent, WebSearch, Skill, MCP tools.

The tool calls stay tool calls; these events come in addition: a ``PlanUpdate`` for each TodoWrite (the whole list
it writes) and for each task-list change that succeeded (``TaskCreate``/``TaskUpdate``, the list the CLI keeps), and
a ``CapabilityStart`` when a capability's call is complete, ended by its tool result.
"""

from __future__ import annotations

import re
from typing import Any

from .._events import CapabilityEnd, CapabilityKind, CapabilityStart, Event, PlanItem, PlanUpdate
from ._hosted import HOST_SERVER

PLAN_TOOL = "TodoWrite"
TASK_TOOLS = frozenset({"TaskCreate", "TaskUpdate"})
_CREATED = re.compile(r"Task #(\S+) created")
_KINDS: dict[str, CapabilityKind] = {
    "Task": "subagent",
    "Agent": "subagent",
    "WebSearch": "web_search",
    "Skill": "skill",
}


def plan_items(todos: Any) -> tuple[PlanItem, ...]:
    """TodoWrite's ``todos`` as plan items (an entry that is not an object is skipped)."""
    if not isinstance(todos, list):
        return ()
    items = []
    for t in todos:
        if not isinstance(t, dict):
            continue
        priority, ident = t.get("priority"), t.get("id")
        items.append(
            PlanItem(
                text=str(t.get("content") or t.get("activeForm") or ""),
                status=str(t.get("status") or "pending"),  # type: ignore[arg-type]  # mapped by PlanItem
                priority=None if priority is None else str(priority),
                id=None if ident is None else str(ident),
            )
        )
    return tuple(items)


def capability_of(name: str, args: dict[str, Any]) -> tuple[CapabilityKind, str] | None:
    """``(kind, name)`` of a capability tool call, or None for an ordinary tool (host tools included)."""
    kind = _KINDS.get(name)
    if kind == "subagent":
        return kind, str(args.get("subagent_type") or args.get("agent") or name)
    if kind == "skill":
        return kind, str(args.get("skill") or args.get("command") or name)
    if kind is not None:
        return kind, name
    if name.startswith("mcp__"):
        server, sep, tool = name[5:].partition("__")
        if sep and server != HOST_SERVER:
            return "mcp_tool", f"{server}/{tool}"
    return None


class ClaudeActivity:
    """Plan updates and capability scopes of one run's tool calls (``source`` labels the plans)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.open: dict[str, CapabilityStart] = {}
        self.tasks: dict[str, PlanItem] = {}  # the CLI's task list as this run has seen it, by task id
        self._task_calls: dict[str, tuple[str, dict[str, Any]]] = {}

    def tool(self, tool_id: str, name: str, args: dict[str, Any]) -> list[Event]:
        """Events for a tool call whose arguments are complete."""
        if name == PLAN_TOOL:
            return [PlanUpdate(items=plan_items(args.get("todos")), source=f"{self.prefix}.{PLAN_TOOL}")]
        if name in TASK_TOOLS:
            self._task_calls[tool_id] = (name, args)
            return []
        found = capability_of(name, args)
        if found is None or tool_id in self.open:
            return []
        start = CapabilityStart(kind=found[0], name=found[1], scope=tool_id, input=args)
        self.open[tool_id] = start
        return [start]

    def result(self, tool_id: str, content: Any, is_error: bool, extra: Any = None) -> list[Event]:
        """The end of the capability a tool result answers, if it started one; a task list changed by it."""
        task_call = self._task_calls.pop(tool_id, None)
        if task_call is not None:
            return [] if is_error else self._task_change(*task_call, _text(content))
        start = self.open.pop(tool_id, None)
        if start is None:
            return []
        output: dict[str, Any] = {"content": content}
        if extra is not None:
            output["tool_use_result"] = extra
        return [CapabilityEnd(kind=start.kind, name=start.name, scope=tool_id, output=output, ok=not is_error)]

    def _task_change(self, name: str, args: dict[str, Any], answer: str) -> list[Event]:
        """The task list after a successful ``TaskCreate`` (its id read from the answer) or ``TaskUpdate``."""
        if name == "TaskCreate":
            found = _CREATED.search(answer)
            ident = found.group(1) if found else str(len(self.tasks) + 1)
            self.tasks[ident] = PlanItem(text=str(args.get("subject") or args.get("description") or ""), id=ident)
        else:
            ident = str(args.get("taskId") or "")
            if not ident:
                return []
            old = self.tasks.get(ident) or PlanItem(text=f"task #{ident}", id=ident)
            status = args.get("status")
            if status == "deleted":
                self.tasks.pop(ident, None)
            else:
                self.tasks[ident] = PlanItem(
                    text=str(args.get("subject") or old.text),
                    status=str(status) if status else old.raw_status or old.status,  # type: ignore[arg-type]
                    priority=old.priority,
                    id=ident,
                )
        return [PlanUpdate(items=tuple(self.tasks.values()), source=f"{self.prefix}.tasks")]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""
