"""Skill references: where a skill's ``SKILL.md`` folder comes from (inline text, a directory, package resources,
an archive, or a bare key resolved by a provider)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from typing import Any

from .._errors import SkillKeyMissingError

# Skill keys become folder names in a CLI profile: keep them portable and free of path syntax.
KEY_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")


def check_key(key: Any, what: str = "skill") -> str:
    """Return ``key`` when it is a usable skill key, else raise SkillKeyMissingError naming it."""
    if not isinstance(key, str) or not key:
        raise SkillKeyMissingError(f"{what} has no key (got {key!r})", option="skills", details={"skill": key})
    if not KEY_PATTERN.match(key) or key in (".", "..") or ".." in key:
        raise SkillKeyMissingError(
            f"skill key {key!r} is not usable: 1-64 letters, digits, '.', '_' or '-', starting with a letter or "
            "digit, no '..'",
            option="skills",
            details={"skill": key},
        )
    return key


def archive_stem(path: str) -> str:
    name = os.path.basename(os.fspath(path))
    for suffix in _ARCHIVE_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


@dataclass(frozen=True)
class Inline:
    """A skill written here: ``body`` becomes the text of its ``SKILL.md`` (with a generated front matter)."""

    key: str
    body: str
    description: str = ""

    def __init__(self, key: str, body: str, *, description: str = "") -> None:
        object.__setattr__(self, "key", check_key(key))
        if not isinstance(body, str):
            raise TypeError(f"skill.Inline body must be a str, got {type(body).__name__}")
        if not isinstance(description, str):
            raise TypeError("skill.Inline description must be a str")
        object.__setattr__(self, "body", body)
        object.__setattr__(self, "description", description)

    def __repr__(self) -> str:
        return f"skill.Inline({self.key!r}, <{len(self.body)} chars>)"


@dataclass(frozen=True)
class Dir:
    """A skill folder on disk holding ``SKILL.md`` (and any files it refers to); the key defaults to its name."""

    path: str
    key: str = ""

    def __init__(self, path: str | os.PathLike[str], *, key: str | None = None) -> None:
        p = os.path.abspath(os.fspath(path))
        object.__setattr__(self, "path", p)
        object.__setattr__(self, "key", check_key(key if key is not None else os.path.basename(p.rstrip("/"))))


@dataclass(frozen=True)
class FS:
    """A skill folder inside package resources (``importlib.resources.files("pkg") / "skills" / "review"``) or any
    other ``Traversable``; the key defaults to its name."""

    root: Traversable = field(compare=False)
    key: str = ""

    def __init__(self, root: Traversable, *, key: str | None = None) -> None:
        if not callable(getattr(root, "iterdir", None)) or not callable(getattr(root, "read_bytes", None)):
            raise TypeError(f"skill.FS needs an importlib.resources Traversable, got {type(root).__name__}")
        object.__setattr__(self, "root", root)
        object.__setattr__(self, "key", check_key(key if key is not None else root.name))

    def __repr__(self) -> str:
        return f"skill.FS({self.key!r})"


@dataclass(frozen=True)
class Archive:
    """A skill packed as ``.zip``, ``.tar`` or ``.tar.gz``/``.tgz``: ``SKILL.md`` at its root or in one top
    folder. Extracted by the materializer within its safety limits; the key defaults to the file's stem."""

    path: str
    key: str = ""

    def __init__(self, path: str | os.PathLike[str], *, key: str | None = None) -> None:
        p = os.path.abspath(os.fspath(path))
        object.__setattr__(self, "path", p)
        object.__setattr__(self, "key", check_key(key if key is not None else archive_stem(p)))


@dataclass(frozen=True)
class Key:
    """A bare key, resolved by the Agent's ``skill_provider`` (SkillNotFoundError when it does not know it).
    A plain string in ``skills=[...]`` means the same."""

    key: str

    def __init__(self, key: str) -> None:
        object.__setattr__(self, "key", check_key(key))


@dataclass(frozen=True)
class Require:
    """A skill that must already be installed in the CLI's profile (or known to the provider); nothing is copied
    for it, and a missing one fails before launch with SkillNotFoundError."""

    key: str

    def __init__(self, key: str) -> None:
        object.__setattr__(self, "key", check_key(key))


Source = Inline | Dir | FS | Archive
"""A reference that carries its own content."""
Ref = Inline | Dir | FS | Archive | Key | Require
"""Anything ``skills=[...]`` accepts besides a plain string key."""


def as_ref(value: Any) -> Ref:
    """A plain string becomes ``Key``; a Ref is returned as is; anything else is a SkillKeyMissingError."""
    if isinstance(value, str):
        return Key(value)
    if isinstance(value, Inline | Dir | FS | Archive | Key | Require):
        return value
    raise SkillKeyMissingError(
        f"skills= takes skill.Inline/Dir/FS/Archive/Key/Require or a key string, got {type(value).__name__}",
        option="skills",
    )
