"""The ``SKILL.md`` format both CLIs read: a YAML-ish front matter (``name``, ``description``) and a body."""

from __future__ import annotations

import json
import re

_FRONT = re.compile(r"\A---\r?\n(.*?)\r?\n---\r?\n?", re.S)


def parse(text: str) -> tuple[dict[str, str], str]:
    """The flat ``key: value`` front matter and the body of a SKILL.md (no front matter: ``{}`` and the text)."""
    m = _FRONT.match(text)
    if not m:
        return {}, text
    meta: dict[str, str] = {}
    for line in m.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t")):
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            meta[key.strip()] = value
    return meta, text[m.end() :]


def render(name: str, description: str, body: str) -> str:
    """A SKILL.md with front matter naming the skill; the description is JSON-quoted (valid YAML) on one line."""
    desc = " ".join(description.split()) or f"The {name} skill."
    return f"---\nname: {name}\ndescription: {json.dumps(desc)}\n---\n\n{body.rstrip()}\n"


def with_name(text: str, name: str) -> str:
    """``text`` with its front matter ``name`` set to ``name``; other front-matter lines are kept as written (no
    front matter: one is added)."""
    m = _FRONT.match(text)
    if not m:
        return render(name, "", text)
    lines = [ln for ln in m.group(1).splitlines() if not re.match(r"^name\s*:", ln)]
    return "---\nname: " + name + "\n" + "\n".join(lines) + "\n---\n" + text[m.end() :]
