"""The profile side of the Driver SPI: where a driver's CLI keeps its profile (settings, credentials, skills, MCP),
and the reports inspection returns (quota, config schema, skills, profile state)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol, runtime_checkable

from ..profile._resources import ResourceKind, ResourceMaterialization, ResourceSupport


@dataclass(frozen=True)
class ProfileLayout:
    """How a CLI's profile folder is laid out; the core creates private profiles and installs skills from it.

    ``env_var`` points the CLI at a profile folder (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``); ``configured_dir`` is
    the folder the driver uses as configured, ``native_dir`` the CLI's own default under ``HOME``. ``skills_dir``
    (relative) is where the CLI reads ``<key>/SKILL.md`` folders; empty means it reads none, and skills are put
    into the prompt instead (declared as prompt-injected). ``mcp`` names ``(file, key)`` pairs holding MCP
    declarations; ``seed`` maps relative paths to the text a fresh private profile starts with.

    Profile resources land in a private profile when the layout names where: ``agents_dir`` (relative) is the
    folder of ``<name>.md`` agent definitions, ``hooks_key`` the key of the ``config_file`` the hooks go under, and
    ``config_file`` (relative, ``.json`` or ``.toml``) the settings file the ``config`` mapping is merged into.
    Empty means the CLI reads no such thing: a non-empty family then fails before launch.
    """

    driver: str
    env_var: str
    configured_dir: str
    native_dir: str
    skills_dir: str = "skills"
    settings_files: tuple[str, ...] = ()
    auth_files: tuple[str, ...] = ()
    mcp: tuple[tuple[str, str], ...] = ()
    seed: Mapping[str, str] = field(default_factory=dict)
    agents_dir: str = ""
    hooks_key: str = ""
    config_file: str = ""


@runtime_checkable
class ProfileAware(Protocol):
    """A driver whose CLI has a profile folder the core may select, create and install skills into."""

    def profile_layout(self) -> ProfileLayout: ...


class ProfileKind(str, Enum):
    SHARED = "shared"
    """The user's (or the configured) profile, shared with other programs."""
    HOST_MANAGED = "host_managed"
    """A private profile folder owned by the Agent."""


class Availability(str, Enum):
    """Whether an inspection answer is real data, unsupported by the driver, or unavailable right now."""

    AVAILABLE = "available"
    UNSUPPORTED = "unsupported"
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class QuotaReport:
    """Usage limits the CLI reports without a model task; ``status`` says when it cannot tell."""

    driver: str
    status: Availability
    detail: str = ""
    limits: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ConfigSchema:
    """The JSON schema of the CLI's configuration, where the driver knows one."""

    driver: str
    status: Availability
    schema: Mapping[str, Any] = field(default_factory=dict)
    detail: str = ""


@dataclass(frozen=True)
class SkillInfo:
    """One skill as inspection sees it: where it comes from and whether it is in the profile."""

    key: str
    description: str = ""
    source: str = ""
    """``inline``, ``dir``, ``fs``, ``archive``, ``catalog`` (offered by the provider) or ``external``."""
    installed: bool = False
    selected: bool = False
    fingerprint: str = ""


@dataclass(frozen=True)
class SkillSnapshot:
    """The skills of an Agent's profile: requested, selected, offered by the provider and found in the folder."""

    driver: str
    materialization: ResourceMaterialization
    skills: tuple[SkillInfo, ...] = ()
    directory: str = ""
    warnings: tuple[str, ...] = ()

    def keys(self) -> list[str]:
        return [s.key for s in self.skills]


@dataclass(frozen=True)
class AgentProfile:
    """The profile an Agent runs its CLI with."""

    identity: str
    directory: str = ""
    env_var: str = ""
    keep: bool = False


@dataclass(frozen=True)
class ResourceSnapshot:
    """One resource family: desired versus materialized."""

    kind: ResourceKind
    fingerprint: str = ""
    managed: tuple[str, ...] = ()
    external: tuple[str, ...] = ()
    support: ResourceSupport = ResourceSupport.UNSUPPORTED
    materialization: ResourceMaterialization = ResourceMaterialization.NOT_MATERIALIZED
    warnings: tuple[str, ...] = ()
    error: str = ""


@dataclass(frozen=True)
class ProfileSnapshot:
    """What ``agent.profile_state()`` observes; ``fingerprint`` changes when the desired resources do."""

    driver: str
    profile: AgentProfile
    kind: ProfileKind
    fingerprint: str = ""
    resources: tuple[ResourceSnapshot, ...] = ()
    warnings: tuple[str, ...] = ()
    materialized: bool = False


@runtime_checkable
class QuotaProbe(Protocol):
    async def probe_quota(self) -> QuotaReport: ...


@runtime_checkable
class ConfigSchemaProbe(Protocol):
    async def config_schema(self) -> ConfigSchema: ...
