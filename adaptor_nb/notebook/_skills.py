"""``%%agent --skill KEY_OR_PATH`` and ``%agent skills``: skills from a notebook cell and the skills view."""

from __future__ import annotations

import os
from typing import Any

from ..skill import Archive, Dir, Key, Ref

_ARCHIVES = (".zip", ".tar", ".tar.gz", ".tgz")


def skill_ref(value: str) -> Ref:
    """A path to a skill folder or archive becomes ``skill.Dir`` / ``skill.Archive``; a ``SKILL.md`` file names
    its folder; anything else is a bare key for the Agent's skill provider."""
    path = os.path.expanduser(value)
    if os.path.isdir(path):
        return Dir(path)
    if os.path.isfile(path):
        if path.lower().endswith(_ARCHIVES):
            return Archive(path)
        if os.path.basename(path) == "SKILL.md":
            return Dir(os.path.dirname(os.path.abspath(path)))
    if os.sep in value or value.startswith((".", "~")):
        return Dir(path)  # a path that does not exist: SkillSourceMissingError names it before launch
    return Key(value)


def skill_refs(values: tuple[str, ...]) -> list[Ref]:
    return [skill_ref(v) for v in values]


async def skills_report(agents: dict[str, Any]) -> str:
    """What ``%agent skills`` prints: for each notebook Agent, the skills of its profile."""
    if not agents:
        return "no agent yet: run an %%agent cell first (skills come from --skill, skills= or the CLI's profile)"
    lines: list[str] = []
    for name, agent in sorted(agents.items()):
        snap = await agent.inspect().skills()
        where = f" in {snap.directory}" if snap.directory else ""
        lines.append(f"{name}: {snap.materialization.value}{where}")
        for info in snap.skills:
            flags = [info.source]
            if info.installed:
                flags.append("installed")
            if info.selected:
                flags.append("selected")
            desc = f" - {info.description}" if info.description else ""
            lines.append(f"  {info.key} ({', '.join(flags)}){desc}")
        if not snap.skills:
            lines.append("  (no skills)")
        lines += [f"  note: {w}" for w in snap.warnings]
    return "\n".join(lines)
