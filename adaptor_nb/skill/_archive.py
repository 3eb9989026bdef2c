"""Safe extraction of skill archives (zip, tar, tar.gz): regular files and folders only, inside the target, within
limits on total size, file count, entry count (folders included), path length and depth; anything else is refused
before a byte is written."""

from __future__ import annotations

import os
import posixpath
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from .._errors import SkillMaterializationFailedError


@dataclass(frozen=True)
class ArchiveLimits:
    """Bounds an archive must stay within (every field a positive int)."""

    max_total_bytes: int = 16 * 1024 * 1024
    max_files: int = 1000
    max_path_length: int = 240
    max_depth: int = 16
    max_file_bytes: int = 8 * 1024 * 1024
    max_entries: int = 2000  # members of every kind, folders and repeated or empty names included

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"ArchiveLimits.{name} must be a positive int, got {value!r}")


@dataclass(frozen=True)
class _Member:
    name: str
    is_dir: bool
    size: int
    open: object  # a zero-argument callable returning a binary file object (None for folders)


class ArchiveRefused(Exception):
    """An archive broke a rule; the message says which member and why."""


def _clean(name: str, limits: ArchiveLimits) -> str:
    """The member's normalised relative path, or ArchiveRefused (absolute, traversal, odd characters, too long)."""
    raw = name.replace("\\", "/")
    if "\0" in raw or any(ord(c) < 32 for c in raw):
        raise ArchiveRefused(f"member {name!r} has a control character in its name")
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":"):
        raise ArchiveRefused(f"member {name!r} has an absolute path")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise ArchiveRefused(f"member {name!r} climbs out of the archive with '..'")
    clean = "/".join(parts)
    if len(clean) > limits.max_path_length:
        raise ArchiveRefused(f"member {name[:60]!r}... is longer than {limits.max_path_length} characters")
    if len(parts) > limits.max_depth:
        raise ArchiveRefused(f"member {name!r} is nested deeper than {limits.max_depth} folders")
    return clean


def _zip_members(zf: zipfile.ZipFile) -> Iterator[_Member]:
    for info in zf.infolist():
        kind = stat.S_IFMT((info.external_attr >> 16) & 0xFFFF)  # 0: no Unix type recorded (a plain file)
        if kind == stat.S_IFLNK:
            raise ArchiveRefused(f"member {info.filename!r} is a symbolic link")
        if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
            raise ArchiveRefused(f"member {info.filename!r} is not a regular file or folder")
        if info.flag_bits & 0x1:
            raise ArchiveRefused(f"member {info.filename!r} is encrypted")
        is_dir = info.filename.endswith("/")  # ZipInfo.is_dir() fails on an empty name
        yield _Member(info.filename, is_dir, 0 if is_dir else info.file_size, lambda i=info: zf.open(i))


def _tar_members(tf: tarfile.TarFile) -> Iterator[_Member]:
    for info in tf:
        if info.issym() or info.islnk():
            raise ArchiveRefused(f"member {info.name!r} is a link")
        if info.isdev() or info.isfifo():
            raise ArchiveRefused(f"member {info.name!r} is a device or pipe")
        if not (info.isreg() or info.isdir()):
            raise ArchiveRefused(f"member {info.name!r} is not a regular file or folder")
        yield _Member(info.name, info.isdir(), info.size, lambda i=info: tf.extractfile(i))


def _copy(src: IO[bytes], dst: IO[bytes], budget: int, name: str) -> int:
    """Copy at most ``budget`` bytes; a member that inflates past it (a bomb lying about its size) is refused."""
    written = 0
    while True:
        chunk = src.read(min(65536, budget - written + 1))
        if not chunk:
            return written
        written += len(chunk)
        if written > budget:
            raise ArchiveRefused(f"member {name!r} inflates past the size limit")
        dst.write(chunk)


def extract(path: str, target: str, limits: ArchiveLimits) -> None:
    """Extract the archive at ``path`` into the existing empty folder ``target``; ArchiveRefused on any rule."""
    lower = path.lower()
    if lower.endswith(".zip"):
        with zipfile.ZipFile(path) as zf:
            _extract(_zip_members(zf), target, limits)
    elif lower.endswith((".tar", ".tar.gz", ".tgz")):
        with tarfile.open(path, "r:*") as tf:
            _extract(_tar_members(tf), target, limits)
    else:
        raise ArchiveRefused("is not a .zip, .tar, .tar.gz or .tgz file")


def _extract(members: Iterator[_Member], target: str, limits: ArchiveLimits) -> None:
    # First pass: every rule that can be checked from the listing, before anything is written.
    plan: list[tuple[str, _Member]] = []
    seen: set[str] = set()
    total = 0
    for count, m in enumerate(members, 1):
        if count > limits.max_entries:  # checked as the listing is read: a tar is not read to its end
            raise ArchiveRefused(f"holds more than {limits.max_entries} entries (files and folders)")
        clean = _clean(m.name, limits)
        if not clean:
            continue
        if clean in seen and not m.is_dir:
            raise ArchiveRefused(f"member {m.name!r} appears twice")
        seen.add(clean)
        if not m.is_dir:
            if len(plan) + 1 > limits.max_files:
                raise ArchiveRefused(f"holds more than {limits.max_files} files")
            if m.size > limits.max_file_bytes:
                raise ArchiveRefused(f"member {m.name!r} is larger than {limits.max_file_bytes} bytes")
            total += m.size
            if total > limits.max_total_bytes:
                raise ArchiveRefused(f"unpacks to more than {limits.max_total_bytes} bytes")
        plan.append((clean, m))
    files = {c for c, m in plan if not m.is_dir}
    for c in files:  # a file used as a folder by another member (the shape of a symlink swap)
        parent = posixpath.dirname(c)
        while parent:
            if parent in files:
                raise ArchiveRefused(f"member {c!r} sits under {parent!r}, which is a file")
            parent = posixpath.dirname(parent)
    root = os.path.realpath(target)
    budget = limits.max_total_bytes
    for clean, m in plan:
        dest = os.path.join(root, *clean.split("/"))
        if os.path.commonpath([root, os.path.realpath(os.path.dirname(dest))]) != root:
            raise ArchiveRefused(f"member {m.name!r} would land outside the target")
        if m.is_dir:
            os.makedirs(dest, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if os.path.lexists(dest):
            raise ArchiveRefused(f"member {m.name!r} would overwrite {clean!r}")
        opener = m.open
        assert callable(opener)
        src = opener()
        if src is None:
            raise ArchiveRefused(f"member {m.name!r} has no readable content")
        # O_EXCL|O_NOFOLLOW: never follow a link planted at the destination, never overwrite
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with src, os.fdopen(fd, "wb") as dst:
            budget -= _copy(src, dst, min(budget, limits.max_file_bytes), m.name)


def refusal(key: str, path: str, why: object) -> SkillMaterializationFailedError:
    return SkillMaterializationFailedError(
        f"skill {key!r}: the archive {os.path.basename(path)!r} was refused: {why}",
        option="skills",
        details={"skill": key, "archive": path},
    )
