"""File work for profiles: cloning a profile folder's chosen parts, installing and removing managed skills."""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

from .._errors import SkillMaterializationFailedError
from ..driver._profile import ProfileLayout
from ..profile._selection import CloneFrom, CloneNative, CopyAuth, CopyMCP, CopySettings, CopySkills, LinkAuth
from ..skill._materializer import SKILL_FILE, MaterializedSkill
from ..skill._skillmd import parse as parse_skill_md

MARKER = ".adaptor_nb-managed.json"


def installed_skills(folder: str) -> dict[str, str]:
    """Skill folders (holding SKILL.md) in ``folder``: key -> description."""
    out: dict[str, str] = {}
    if not folder or not os.path.isdir(folder):
        return out
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name, SKILL_FILE)
        if os.path.isfile(path):
            try:
                with open(path, encoding="utf-8") as fh:
                    meta, _ = parse_skill_md(fh.read(4096))
            except (OSError, UnicodeDecodeError):
                meta = {}
            out[name] = meta.get("description", "")
    return out


def _marker(folder: str) -> dict[str, Any] | None:
    try:
        with open(os.path.join(folder, MARKER), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_managed(skills_dir: str, m: MaterializedSkill, owner: str) -> bool:
    """Install ``m`` as ``skills_dir/<key>`` with a marker; True when this call created it.

    A folder of that name that adaptor_nb did not write is never touched: SkillMaterializationFailedError.
    """
    os.makedirs(skills_dir, exist_ok=True)
    dest = os.path.join(skills_dir, m.key)
    fresh = True
    if os.path.lexists(dest):
        mark = _marker(dest) if os.path.isdir(dest) and not os.path.islink(dest) else None
        if mark is None:
            raise SkillMaterializationFailedError(
                f"skill {m.key!r}: {dest!r} already exists and was not written by adaptor_nb; "
                "rename the skill or remove that folder",
                option="skills",
                details={"skill": m.key},
            )
        if mark.get("fingerprint") == m.fingerprint:
            return False
        fresh = mark.get("owner") != owner
        shutil.rmtree(dest)
    shutil.copytree(m.path, dest, symlinks=False)
    with open(os.path.join(dest, MARKER), "w", encoding="utf-8") as fh:
        json.dump({"owner": owner, "fingerprint": m.fingerprint, "key": m.key}, fh)
    return fresh


def remove_managed(skills_dir: str, keys: list[str], owner: str) -> list[str]:
    failures: list[str] = []
    for key in keys:
        dest = os.path.join(skills_dir, key)
        mark = _marker(dest)
        if mark is None or mark.get("owner") != owner:
            continue
        try:
            shutil.rmtree(dest)
        except OSError as exc:
            failures.append(f"could not remove skill folder {dest!r}: {exc}")
    return failures


def clone_into(layout: ProfileLayout, source: str, target: str, sel: CloneNative | CloneFrom) -> None:
    """Copy (or link) the parts of the profile ``source`` that ``sel`` asks for into ``target``."""
    if not os.path.isdir(source):
        return
    if sel.has(CopySettings):
        for rel in layout.settings_files:
            _copy_file(os.path.join(source, rel), os.path.join(target, rel))
    elif sel.has(CopyMCP):
        for rel, key in layout.mcp:
            _copy_key(os.path.join(source, rel), os.path.join(target, rel), key)
    if sel.has(CopyAuth) or sel.has(LinkAuth):
        for rel in layout.auth_files:
            src = os.path.join(source, rel)
            if not os.path.isfile(src):
                continue
            dst = os.path.join(target, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.lexists(dst):
                os.remove(dst)
            if sel.has(LinkAuth):
                os.symlink(os.path.realpath(src), dst)
            else:
                shutil.copy2(src, dst)
                os.chmod(dst, 0o600)
    if sel.has(CopySkills) and layout.skills_dir:
        src_dir = os.path.join(source, layout.skills_dir)
        if os.path.isdir(src_dir):
            shutil.copytree(src_dir, os.path.join(target, layout.skills_dir), symlinks=True, dirs_exist_ok=True)


def _copy_file(src: str, dst: str) -> None:
    if os.path.isfile(src):
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)


def _copy_key(src: str, dst: str, key: str) -> None:
    """Copy one top-level table (``mcpServers`` in JSON, ``mcp_servers`` in TOML) from ``src`` to ``dst``."""
    if not os.path.isfile(src):
        return
    if src.endswith(".toml"):
        with open(src, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
        kept: list[str] = []
        inside = False
        for line in lines:
            head = line.strip()
            if head.startswith("["):
                name = head.strip("[]").strip()
                inside = name == key or name.startswith(key + ".")
            if inside:
                kept.append(line)
        if kept:
            with open(dst, "a", encoding="utf-8") as out:
                out.write("\n".join(kept) + "\n")
        return
    with open(src, encoding="utf-8") as fh:
        data = json.load(fh)
    if isinstance(data, dict) and key in data:
        with open(dst, "w", encoding="utf-8") as out:
            json.dump({key: data[key]}, out, indent=2)
