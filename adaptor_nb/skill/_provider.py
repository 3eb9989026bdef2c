"""Skill providers: resolve bare keys (``skills=["review"]``) to sources, optionally listing a catalogue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .._errors import SkillKeyConflictError
from ._refs import FS, Archive, Dir, Inline, Source


@dataclass(frozen=True)
class CatalogEntry:
    """One skill a provider offers."""

    key: str
    description: str = ""


@runtime_checkable
class Provider(Protocol):
    """Resolves a bare key to a skill source, or None when it does not know the key."""

    def resolve(self, key: str) -> Source | None: ...


@runtime_checkable
class Catalog(Protocol):
    """A provider that can also list what it offers (shown by ``agent.inspect().skills()``)."""

    def catalog(self) -> list[CatalogEntry]: ...


class Set:
    """A static provider: the given sources by key. ``catalog=True`` lets inspection list them."""

    def __init__(self, *skills: Source, catalog: bool = False) -> None:
        self._skills: dict[str, Source] = {}
        for s in skills:
            if not isinstance(s, Inline | Dir | FS | Archive):
                raise TypeError(f"skill.Set takes skill.Inline/Dir/FS/Archive, got {type(s).__name__}")
            if s.key in self._skills:
                raise SkillKeyConflictError(
                    f"skill key {s.key!r} is given twice to skill.Set",
                    option="skill_provider",
                    details={"skill": s.key},
                )
            self._skills[s.key] = s
        self._listed = catalog

    def __repr__(self) -> str:
        return f"skill.Set({', '.join(sorted(self._skills))})"

    def resolve(self, key: str) -> Source | None:
        return self._skills.get(key)

    def keys(self) -> list[str]:
        return sorted(self._skills)

    def catalog(self) -> list[CatalogEntry]:
        if not self._listed:
            return []
        return [CatalogEntry(k, getattr(s, "description", "")) for k, s in sorted(self._skills.items())]
