"""The default skill materializer: turns a skill source into a ``SKILL.md`` folder in a target directory,
never writing outside it, within the same limits for folders, package resources and archives."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from typing import Protocol, runtime_checkable

from .._errors import SkillMaterializationFailedError, SkillSourceMissingError
from ._archive import ArchiveLimits, ArchiveRefused, extract, refusal
from ._refs import FS, Archive, Dir, Inline, Source
from ._skillmd import parse as parse_skill_md
from ._skillmd import render as render_skill_md
from ._skillmd import with_name as skill_md_with_name

SKILL_FILE = "SKILL.md"


@dataclass(frozen=True)
class MaterializedSkill:
    """A skill ready to install: its folder (holding SKILL.md), description and a content fingerprint."""

    key: str
    path: str
    description: str
    fingerprint: str
    source: str


@runtime_checkable
class Materializer(Protocol):
    """Writes the folder of one skill source into ``target`` (an empty directory that exists)."""

    def materialize(self, ref: Source, target: str) -> MaterializedSkill: ...


def fingerprint_tree(root: str) -> str:
    """SHA-256 over the relative paths and bytes of every file under ``root`` (stable across machines)."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            digest.update(os.path.relpath(full, root).replace(os.sep, "/").encode() + b"\0")
            with open(full, "rb") as fh:
                digest.update(hashlib.sha256(fh.read()).digest())
    return digest.hexdigest()[:32]


class DefaultMaterializer:
    """Materializes ``skill.Inline``, ``Dir``, ``FS`` and ``Archive``; ``limits`` bound every source."""

    def __init__(self, limits: ArchiveLimits | None = None) -> None:
        self.limits = limits if limits is not None else ArchiveLimits()

    def __repr__(self) -> str:
        return f"skill.DefaultMaterializer({self.limits!r})"

    def materialize(self, ref: Source, target: str) -> MaterializedSkill:
        if isinstance(ref, Inline):
            with open(os.path.join(target, SKILL_FILE), "w", encoding="utf-8") as fh:
                fh.write(render_skill_md(ref.key, ref.description, ref.body))
            kind = "inline"
        elif isinstance(ref, Dir):
            self._copy_dir(ref.key, ref.path, target)
            kind = "dir"
        elif isinstance(ref, FS):
            self._copy_traversable(ref.key, ref.root, target, [0, 0])
            kind = "fs"
        elif isinstance(ref, Archive):
            self._unpack(ref, target)
            kind = "archive"
        else:
            raise SkillMaterializationFailedError(
                f"the default materializer cannot materialize {ref!r}", option="skills", details={"skill": ref.key}
            )
        return finish(ref.key, target, kind)

    # -- sources -----------------------------------------------------------------------------------------

    def _copy_dir(self, key: str, src: str, target: str) -> None:
        if not os.path.isdir(src):
            raise SkillSourceMissingError(
                f"skill {key!r}: the folder {src!r} does not exist", option="skills", details={"skill": key}
            )
        files = total = 0
        for dirpath, dirnames, filenames in os.walk(src):
            rel = os.path.relpath(dirpath, src)
            depth = 0 if rel == "." else rel.count(os.sep) + 1
            if depth > self.limits.max_depth:
                raise _failed(key, f"{rel!r} is nested deeper than {self.limits.max_depth} folders")
            for name in [*dirnames, *filenames]:
                full = os.path.join(dirpath, name)
                mode = os.lstat(full).st_mode
                if stat.S_ISLNK(mode):
                    raise _failed(key, f"{os.path.relpath(full, src)!r} is a symbolic link")
                if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                    raise _failed(key, f"{os.path.relpath(full, src)!r} is not a regular file or folder")
            out_dir = target if rel == "." else os.path.join(target, rel)
            os.makedirs(out_dir, exist_ok=True)
            for name in filenames:
                full = os.path.join(dirpath, name)
                files += 1
                total += os.path.getsize(full)
                if files > self.limits.max_files or total > self.limits.max_total_bytes:
                    raise _failed(key, "the folder is larger than the materializer's limits")
                shutil.copyfile(full, os.path.join(out_dir, name), follow_symlinks=False)

    def _copy_traversable(self, key: str, node: Traversable, target: str, count: list[int], depth: int = 0) -> None:
        if depth == 0 and not node.is_dir():
            raise SkillSourceMissingError(
                f"skill {key!r}: the resource folder {node!r} does not exist", option="skills", details={"skill": key}
            )
        if depth > self.limits.max_depth:
            raise _failed(key, f"resources are nested deeper than {self.limits.max_depth} folders")
        for child in node.iterdir():
            name = child.name
            if name in ("", ".", "..") or "/" in name or "\\" in name or "\0" in name:
                raise _failed(key, f"resource name {name!r} is not a plain file name")
            dest = os.path.join(target, name)
            if child.is_dir():
                os.makedirs(dest, exist_ok=True)
                self._copy_traversable(key, child, dest, count, depth + 1)
            elif child.is_file():
                data = child.read_bytes()
                count[0] += 1
                count[1] += len(data)
                if count[0] > self.limits.max_files or count[1] > self.limits.max_total_bytes:
                    raise _failed(key, "the resources are larger than the materializer's limits")
                with open(dest, "xb") as fh:
                    fh.write(data)

    def _unpack(self, ref: Archive, target: str) -> None:
        if not os.path.isfile(ref.path):
            raise SkillSourceMissingError(
                f"skill {ref.key!r}: the archive {ref.path!r} does not exist",
                option="skills",
                details={"skill": ref.key},
            )
        with tempfile.TemporaryDirectory(dir=target, prefix=".unpack-") as scratch:
            try:
                extract(ref.path, scratch, self.limits)
            except ArchiveRefused as exc:
                raise refusal(ref.key, ref.path, exc) from None
            except (
                OSError,
                EOFError,
                ValueError,
                zipfile.BadZipFile,
                tarfile.TarError,
            ) as exc:  # truncated, corrupt or not an archive at all
                raise refusal(ref.key, ref.path, f"it cannot be read: {type(exc).__name__}: {exc}") from None
            root = scratch
            entries = os.listdir(scratch)
            if SKILL_FILE not in entries and len(entries) == 1 and os.path.isdir(os.path.join(scratch, entries[0])):
                root = os.path.join(scratch, entries[0])
            if not os.path.isfile(os.path.join(root, SKILL_FILE)):
                raise refusal(ref.key, ref.path, f"it has no {SKILL_FILE} at its root or in one top folder")
            for name in os.listdir(root):
                os.rename(os.path.join(root, name), os.path.join(target, name))


def finish(key: str, folder: str, source: str) -> MaterializedSkill:
    """Check the folder has SKILL.md, make its front matter name the key, and fingerprint it."""
    path = os.path.join(folder, SKILL_FILE)
    if not os.path.isfile(path) or os.path.islink(path):
        raise _failed(key, f"it has no {SKILL_FILE}")
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        raise _failed(key, f"its {SKILL_FILE} is not UTF-8 text") from None
    meta, _ = parse_skill_md(text)
    if meta.get("name") != key:
        text = skill_md_with_name(text, key)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        meta, _ = parse_skill_md(text)
    return MaterializedSkill(
        key=key,
        path=folder,
        description=meta.get("description", ""),
        fingerprint=fingerprint_tree(folder),
        source=source,
    )


def _failed(key: str, why: str) -> SkillMaterializationFailedError:
    return SkillMaterializationFailedError(f"skill {key!r}: {why}", option="skills", details={"skill": key})


def new_default_materializer(
    *,
    max_total_bytes: int | None = None,
    max_files: int | None = None,
    max_path_length: int | None = None,
    max_depth: int | None = None,
    max_file_bytes: int | None = None,
) -> DefaultMaterializer:
    """A DefaultMaterializer with some limits changed (the others keep their defaults)."""
    given = {
        "max_total_bytes": max_total_bytes,
        "max_files": max_files,
        "max_path_length": max_path_length,
        "max_depth": max_depth,
        "max_file_bytes": max_file_bytes,
    }
    return DefaultMaterializer(ArchiveLimits(**{k: v for k, v in given.items() if v is not None}))
