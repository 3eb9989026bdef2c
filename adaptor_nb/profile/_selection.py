"""Profile selections: which CLI profile (settings, credentials, skills, MCP) a driver's process runs with."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class CopySettings:
    """Copy the source profile's settings files (Claude ``settings.json``, Codex ``config.toml``)."""


@dataclass(frozen=True)
class CopyMCP:
    """Copy the source profile's MCP server declarations only."""


@dataclass(frozen=True)
class CopySkills:
    """Copy the source profile's installed skills."""


@dataclass(frozen=True)
class CopyAuth:
    """Copy only the credential files (Claude ``.credentials.json``, Codex ``auth.json``)."""


@dataclass(frozen=True)
class LinkAuth:
    """Symlink only the credential files, so a token refreshed by either side serves both."""


@dataclass(frozen=True)
class WithOptions:
    """Where the private profile folder lives and whether ``agent.close()`` keeps it."""

    root: str = ""
    keep: bool = False

    def __init__(self, *, root: str | os.PathLike[str] = "", keep: bool = False) -> None:
        object.__setattr__(self, "root", os.path.abspath(os.fspath(root)) if root else "")
        object.__setattr__(self, "keep", bool(keep))


CloneOption = CopySettings | CopyMCP | CopySkills | CopyAuth | LinkAuth | WithOptions


@dataclass(frozen=True)
class Default:
    """The driver's usual profile (whatever its configuration and environment point at); shared with the user."""

    @property
    def identity(self) -> str:
        return "default"


@dataclass(frozen=True)
class Native:
    """The CLI's own profile under the real ``HOME`` (``~/.claude``, ``~/.codex``), ignoring profile overrides."""

    @property
    def identity(self) -> str:
        return "native"


@dataclass(frozen=True)
class Dedicated:
    """A private, empty profile folder owned by the Agent: created before launch, removed by ``agent.close()``
    unless ``keep``. ``name`` enters Thread compatibility (sessions do not move between profiles)."""

    name: str = "dedicated"
    root: str = ""
    keep: bool = False

    def __init__(self, name: str = "dedicated", *, root: str | os.PathLike[str] = "", keep: bool = False) -> None:
        if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
            raise ValueError(f"profile.Dedicated name must be a plain non-empty name, got {name!r}")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "root", os.path.abspath(os.fspath(root)) if root else "")
        object.__setattr__(self, "keep", bool(keep))

    @property
    def identity(self) -> str:
        return f"dedicated:{self.name}"


@dataclass(frozen=True)
class _Clone:
    source: str
    options: tuple[CloneOption, ...]

    def _init(self, source: str, options: tuple[CloneOption, ...]) -> None:
        for o in options:
            if not isinstance(o, CopySettings | CopyMCP | CopySkills | CopyAuth | LinkAuth | WithOptions):
                raise TypeError(f"{type(self).__name__} takes profile.Copy*/LinkAuth/WithOptions, got {o!r}")
        if any(isinstance(o, CopyAuth) for o in options) and any(isinstance(o, LinkAuth) for o in options):
            raise ValueError(f"{type(self).__name__}: CopyAuth and LinkAuth exclude each other")
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "options", options)

    def has(self, kind: type) -> bool:
        return any(isinstance(o, kind) for o in self.options)

    @property
    def where(self) -> WithOptions:
        for o in self.options:
            if isinstance(o, WithOptions):
                return o
        return WithOptions()

    @property
    def keep(self) -> bool:
        return self.where.keep

    @property
    def root(self) -> str:
        return self.where.root

    @property
    def identity(self) -> str:
        copied = sorted(type(o).__name__ for o in self.options if not isinstance(o, WithOptions))
        return f"{type(self).__name__.lower()}:{self.source}:{','.join(copied)}"


@dataclass(frozen=True, init=False)
class CloneNative(_Clone):
    """A private profile initialised from the CLI's native one with what the options copy (nothing by default)."""

    def __init__(self, *options: CloneOption) -> None:
        self._init("", options)


@dataclass(frozen=True, init=False)
class CloneFrom(_Clone):
    """A private profile initialised from the profile folder ``path`` with what the options copy."""

    def __init__(self, path: str | os.PathLike[str], *options: CloneOption) -> None:
        self._init(os.path.abspath(os.fspath(path)), options)


Selection = Default | Native | Dedicated | CloneNative | CloneFrom
