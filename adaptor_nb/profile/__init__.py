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

from typing import TYPE_CHECKING

from .._naming import lazy_exports

_PUBLIC: dict[str, str] = {
    "AgentSpec": "._specs",
    "CloneFrom": "._selection",
    "CloneNative": "._selection",
    "CloneOption": "._selection",
    "CopyAuth": "._selection",
    "CopyMCP": "._selection",
    "CopySettings": "._selection",
    "CopySkills": "._selection",
    "Dedicated": "._selection",
    "Default": "._selection",
    "HookSpec": "._specs",
    "LinkAuth": "._selection",
    "Native": "._selection",
    "ResourceKind": "._resources",
    "ResourceMaterialization": "._resources",
    "ResourceSupport": "._resources",
    "Resources": "._resources",
    "Selection": "._selection",
    "WithOptions": "._selection",
    "merge_resources": "._resources",
}

if TYPE_CHECKING:
    from ._resources import ResourceKind as ResourceKind
    from ._resources import ResourceMaterialization as ResourceMaterialization
    from ._resources import Resources as Resources
    from ._resources import ResourceSupport as ResourceSupport
    from ._resources import merge_resources as merge_resources
    from ._selection import CloneFrom as CloneFrom
    from ._selection import CloneNative as CloneNative
    from ._selection import CloneOption as CloneOption
    from ._selection import CopyAuth as CopyAuth
    from ._selection import CopyMCP as CopyMCP
    from ._selection import CopySettings as CopySettings
    from ._selection import CopySkills as CopySkills
    from ._selection import Dedicated as Dedicated
    from ._selection import Default as Default
    from ._selection import LinkAuth as LinkAuth
    from ._selection import Native as Native
    from ._selection import Selection as Selection
    from ._selection import WithOptions as WithOptions
    from ._specs import AgentSpec as AgentSpec
    from ._specs import HookSpec as HookSpec

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), _PUBLIC)
