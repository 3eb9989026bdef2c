"""CLI profile selection and profile resources.

Example::

    from adaptor_nb import profile
    agent = Agent(claude.Driver(), profile=profile.Dedicated())           # a clean private profile
    agent = Agent(codex.Driver(), profile=profile.CloneNative(profile.CopyAuth()))  # private, with your login

``profile=`` is construction-only. ``Dedicated``, ``CloneNative`` and ``CloneFrom`` get a private folder owned by
the Agent (``CLAUDE_CONFIG_DIR`` / ``CODEX_HOME``), created before the first launch and removed by
``agent.close()`` unless kept. ``CopyAuth``/``LinkAuth`` bring only the credential files.
"""

from __future__ import annotations

from ._resources import ResourceKind, ResourceMaterialization, Resources, ResourceSupport, merge_resources
from ._selection import (
    CloneFrom,
    CloneNative,
    CloneOption,
    CopyAuth,
    CopyMCP,
    CopySettings,
    CopySkills,
    Dedicated,
    Default,
    LinkAuth,
    Native,
    Selection,
    WithOptions,
)
from ._specs import AgentSpec, HookSpec

__all__ = [
    "AgentSpec",
    "CloneFrom",
    "CloneNative",
    "CloneOption",
    "CopyAuth",
    "CopyMCP",
    "CopySettings",
    "CopySkills",
    "Dedicated",
    "Default",
    "HookSpec",
    "LinkAuth",
    "Native",
    "ResourceKind",
    "ResourceMaterialization",
    "ResourceSupport",
    "Resources",
    "Selection",
    "WithOptions",
    "merge_resources",
]
