"""Profile resources: skills, MCP servers, agents, hooks, instructions and config for the CLI's profile."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .._errors import ConfigError


class ResourceKind(str, Enum):
    SKILLS = "skills"
    MCP = "mcp"
    AGENTS = "agents"
    HOOKS = "hooks"
    INSTRUCTIONS = "instructions"
    CONFIG = "config"


class ResourceSupport(str, Enum):
    PORTABLE_CORE = "portable_core"
    PORTABLE_EXTENDED = "portable_extended"
    NATIVE_ESCAPE = "native_escape"
    FALLBACK = "fallback"
    UNSUPPORTED = "unsupported"


class ResourceMaterialization(str, Enum):
    """How one resource family landed in the profile."""

    NATIVE_MANAGED = "native_managed"
    FILE_MANAGED = "file_managed"
    PROMPT_INJECTED = "prompt_injected"
    FALLBACK = "fallback"
    NOT_MATERIALIZED = "not_materialized"


@dataclass(frozen=True)
class Resources:
    """Resources to put into the profile. ``None`` inherits a family; an empty sequence clears it.

    Merge across scopes: ``skills`` append; ``mcp``, ``agents``, ``hooks``, ``config`` and ``instructions``
    replace their family when not None.
    """

    skills: tuple[Any, ...] = ()
    mcp: tuple[Any, ...] | None = None
    agents: tuple[Any, ...] | None = None
    hooks: tuple[Any, ...] | None = None
    instructions: str | None = None
    config: Mapping[str, Any] | None = field(default=None, compare=False)

    def __init__(
        self,
        *,
        skills: Sequence[Any] = (),
        mcp: Sequence[Any] | None = None,
        agents: Sequence[Any] | None = None,
        hooks: Sequence[Any] | None = None,
        instructions: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        if isinstance(skills, str):
            raise ConfigError("profile.Resources skills must be a list", option="profile_resources")
        object.__setattr__(self, "skills", tuple(skills))
        for name, value in (("mcp", mcp), ("agents", agents), ("hooks", hooks)):
            if value is not None and isinstance(value, str):
                raise ConfigError(f"profile.Resources {name} must be a list or None", option="profile_resources")
            object.__setattr__(self, name, None if value is None else tuple(value))
        if instructions is not None and not isinstance(instructions, str):
            raise ConfigError("profile.Resources instructions must be a string or None", option="profile_resources")
        if config is not None and not isinstance(config, Mapping):
            raise ConfigError("profile.Resources config must be a mapping or None", option="profile_resources")
        object.__setattr__(self, "instructions", instructions)
        object.__setattr__(self, "config", None if config is None else dict(config))


def merge_resources(base: Resources | None, new: Resources) -> Resources:
    """``new`` over ``base`` with the family rules (skills append, the rest replace when given)."""
    if not isinstance(new, Resources):
        raise ConfigError(
            f"profile_resources must be a profile.Resources, got {type(new).__name__}", option="profile_resources"
        )
    if base is None:
        return new
    return Resources(
        skills=(*base.skills, *new.skills),
        mcp=new.mcp if new.mcp is not None else base.mcp,
        agents=new.agents if new.agents is not None else base.agents,
        hooks=new.hooks if new.hooks is not None else base.hooks,
        instructions=new.instructions if new.instructions is not None else base.instructions,
        config=new.config if new.config is not None else base.config,
    )
