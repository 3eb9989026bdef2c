"""The entries of the ``agents`` and ``hooks`` profile-resource families.

Example::

    profile.Resources(
        agents=[profile.AgentSpec("reviewer", "Reviews a diff for missing tests", "You review diffs.")],
        hooks=[profile.HookSpec("PostToolUse", "echo done >> log.txt", matcher="Bash")],
    )
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from .._errors import ConfigError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class AgentSpec:
    """A subagent the CLI offers the model: ``name`` (letters, digits, ``-``/``_``), when to use it, its prompt;
    ``tools`` limits its tools (empty: the CLI's default), ``model`` picks its model (empty: inherit)."""

    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] = ()
    model: str = ""


@dataclass(frozen=True)
class HookSpec:
    """A command the CLI runs on a lifecycle event (``PostToolUse``, ``UserPromptSubmit``, ``Stop``, ...);
    ``matcher`` narrows tool events to matching tool names; ``timeout`` is in seconds (0: the CLI's default)."""

    event: str
    command: str
    matcher: str = ""
    timeout: int = 0


def _coerce(item: Any, cls: type[Any], option: str) -> Any:
    if isinstance(item, cls):
        value = item
    elif isinstance(item, Mapping):
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(item) - names)
        if unknown:
            raise ConfigError(f"{option}: unknown field(s) {unknown} for {cls.__name__}", option=option)
        try:
            value = cls(**item)
        except TypeError as exc:
            raise ConfigError(f"{option}: {exc}", option=option) from None
    else:
        raise ConfigError(f"{option} takes {cls.__name__} entries, got {type(item).__name__}", option=option)
    return value


def as_agent(item: Any) -> AgentSpec:
    """An AgentSpec from an AgentSpec or a mapping with its fields; ConfigError(option="profile_resources.agents")."""
    opt = "profile_resources.agents"
    a: AgentSpec = _coerce(item, AgentSpec, opt)
    if not isinstance(a.name, str) or not _NAME.match(a.name):
        raise ConfigError(f"{opt}: agent name {a.name!r} must be letters, digits, '-' or '_'", option=opt)
    for label in ("description", "prompt", "model"):
        if not isinstance(getattr(a, label), str):
            raise ConfigError(f"{opt}: agent {a.name!r} {label} must be a string", option=opt)
    if not a.description.strip() or not a.prompt.strip():
        raise ConfigError(f"{opt}: agent {a.name!r} needs a description and a prompt", option=opt)
    tools = a.tools
    if isinstance(tools, str) or not all(isinstance(t, str) and t for t in tools):
        raise ConfigError(f"{opt}: agent {a.name!r} tools must be a list of tool names", option=opt)
    return AgentSpec(a.name, a.description, a.prompt, tuple(tools), a.model)


def as_hook(item: Any) -> HookSpec:
    """A HookSpec from a HookSpec or a mapping with its fields; ConfigError(option="profile_resources.hooks")."""
    opt = "profile_resources.hooks"
    h: HookSpec = _coerce(item, HookSpec, opt)
    if not isinstance(h.event, str) or not re.match(r"^[A-Za-z]+$", h.event):
        raise ConfigError(f"{opt}: hook event {h.event!r} must be an event name such as 'PostToolUse'", option=opt)
    if not isinstance(h.command, str) or not h.command.strip():
        raise ConfigError(f"{opt}: the {h.event} hook needs a command", option=opt)
    if not isinstance(h.matcher, str):
        raise ConfigError(f"{opt}: the {h.event} hook matcher must be a string", option=opt)
    if isinstance(h.timeout, bool) or not isinstance(h.timeout, int) or h.timeout < 0:
        raise ConfigError(f"{opt}: the {h.event} hook timeout must be a whole number of seconds", option=opt)
    return h
