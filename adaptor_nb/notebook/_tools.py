"""``%%agent --tools a,b`` and ``%agent tools``: Python functions of the notebook as the Agent's host tools.

The names are looked up in the user namespace when the cell runs: each must hold a callable or a
``tool.define(...)`` result (anything else is a UsageError before any run); a plain function gets a revision
made from its source code, so a Thread sees when its definition changes. Tools are construction-only, so each
distinct tool set gets its own notebook Agent on the same thread store.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["ToolsError", "agent_with_tools", "resolve_tools", "tool_names", "tools_report"]


class ToolsError(ValueError):
    """A ``--tools`` name that cannot be used; shown as a UsageError."""


def tool_names(value: str | None, agent: str | None) -> tuple[str, ...]:
    """The names of ``--tools a,b`` (empty when the flag is absent); raises ToolsError for a bad list."""
    if value is None:
        return ()
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    if not names:
        raise ToolsError("%%agent: --tools needs one or more names of functions, separated by commas")
    if agent is not None:
        raise ToolsError("%%agent: --tools and --agent cannot be used together (give the Agent its tools= instead)")
    bad = [n for n in names if not n.isidentifier()]
    if bad:
        raise ToolsError(f"%%agent: --tools takes variable names of the notebook, got {bad[0]!r}")
    if len(set(names)) != len(names):
        raise ToolsError("%%agent: --tools names a function twice")
    return names


def resolve_tools(names: tuple[str, ...], namespace: dict[str, Any]) -> tuple[Any, ...]:
    """The Tool objects for ``names``; raises ToolsError naming the first unusable one."""
    from ..tools._define import Tool, define

    out: list[Tool] = []
    for name in names:
        if name not in namespace:
            raise ToolsError(f"--tools {name}: no variable named {name!r} in the notebook")
        value = namespace[name]
        if isinstance(value, Tool):
            out.append(value)
            continue
        if not callable(value):
            raise ToolsError(f"--tools {name}: {type(value).__name__} is not callable")
        try:
            out.append(define(value, name=name, revision=_revision(value)))
        except (TypeError, ValueError) as exc:
            raise ToolsError(f"--tools {name}: {exc}") from None
    return tuple(out)


def _revision(fn: Any) -> str:
    """A plain function's revision: a digest of its code, so a Thread notices when the cell defining it changes."""
    import hashlib
    import inspect

    try:
        text = inspect.getsource(fn)
    except (OSError, TypeError):
        code = getattr(fn, "__code__", None)
        text = repr(
            (getattr(fn, "__qualname__", repr(fn)), code.co_code if code else b"", code.co_consts if code else ())
        )
    return "src-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def _signature(tools: tuple[Any, ...]) -> str:
    return ",".join(f"{t.name}@{t.revision}#{id(t.fn):x}" for t in tools)


def agent_with_tools(session: Any, name: str, base: Any, names: tuple[str, ...], namespace: dict[str, Any]) -> Any:
    """The notebook Agent for driver ``name`` (the driver of ``base``) with exactly the tools ``names`` (one Agent
    per distinct tool set); raises ToolsError for an unusable name."""
    from .._agent import Agent

    tools = resolve_tools(names, namespace)
    driver = base.driver
    key = f"{name}+tools:{_signature(tools)}"
    agent = session.agents.get(key)
    if agent is None or agent.closed:
        agent = Agent(driver, thread_store=session.store(), tools=list(tools))
        session.agents[key] = agent
    session.active_tools = tools
    return agent


def tools_report(session: Any) -> str:
    """``%agent tools``: the tools of the last ``--tools`` cell with their input schemas."""
    tools: tuple[Any, ...] = getattr(session, "active_tools", ())
    if not tools:
        return "no Python tools are active; give a cell --tools name1,name2 (functions of this notebook)"
    lines = []
    for t in tools:
        flags = " (asks for approval)" if t.requires_approval else ""
        lines.append(f"{t.name}  revision {t.revision}{flags}")
        if t.description:
            lines.append("  " + t.description.splitlines()[0])
        lines.append("  input: " + json.dumps(t.input_schema, sort_keys=True))
    return "\n".join(lines)
