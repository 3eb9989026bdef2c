"""The public surface as one table, built from the packages' name tables (``docs/api.md`` holds its rendering).

Run ``PYTHONPATH=. .venv/bin/python tests/core/surface.py`` to rewrite the generated part of ``docs/api.md`` after a
table changes; ``tests/core/test_surface.py`` fails while the file and the tables disagree.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
BEGIN = "<!-- generated from the name tables by tests/core/surface.py: do not edit by hand -->"
END = "<!-- end of the generated surface -->"

USERS = "API and notebook users"
DRIVERS = "driver authors"
TESTS = "tests"

# Every public module, in the order that decides a name's home: the first module that lists an object is its home;
# a later module listing the same object under the same name re-exports it.
MODULES: tuple[tuple[str, str], ...] = (
    ("adaptor_nb", USERS),
    ("adaptor_nb.mcp", USERS),
    ("adaptor_nb.tool", USERS),
    ("adaptor_nb.skill", USERS),
    ("adaptor_nb.profile", USERS),
    ("adaptor_nb.workspace", USERS),
    ("adaptor_nb.services", USERS),
    ("adaptor_nb.threadstore", USERS),
    ("adaptor_nb.batch", USERS),
    ("adaptor_nb.notebook", USERS),
    ("adaptor_nb.cassette", USERS),
    ("adaptor_nb.recorder", USERS),
    ("adaptor_nb.bridges.agui", USERS),
    ("adaptor_nb.drivers.claude", USERS),
    ("adaptor_nb.drivers.codex", USERS),
    ("adaptor_nb.drivers.cursor", USERS),
    ("adaptor_nb.drivers.codebuddy", USERS),
    ("adaptor_nb.drivers.acp", USERS),
    ("adaptor_nb.drivers.reference", USERS),
    ("adaptor_nb.driver", DRIVERS),
    ("adaptor_nb.testing", TESTS),
)


@dataclass
class Entry:
    name: str
    home: str
    audience: str
    summary: str
    also: list[str] = field(default_factory=list)


def summary(obj: Any) -> str:
    """One line: the first sentence of the object's own docstring (or what kind of value it is)."""
    if inspect.ismodule(obj) or inspect.isclass(obj) or inspect.isroutine(obj):
        doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
    else:
        doc = None
    if inspect.isclass(obj) and doc and doc.startswith(f"{obj.__name__}("):
        doc = None  # the signature dataclasses write when a class has no docstring
    if not doc:
        kind = "class" if inspect.isclass(obj) else "function" if callable(obj) else f"constant ({type(obj).__name__})"
        return kind
    text = " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())
    for end in (". ",):
        cut = text.find(end)
        if 0 < cut < 150:
            text = text[: cut + 1]
            break
    if len(text) > 150:
        text = text[:147].rstrip() + "..."
    return text.replace("|", "\\|")


def public_names(module: Any) -> list[str]:
    names = getattr(module, "__all__", None)
    assert names is not None, f"{module.__name__} has no __all__"
    return sorted(names)


def surface() -> list[Entry]:
    """Every public name once, at its home, with the modules that re-export the same object."""
    seen: dict[tuple[str, int], Entry] = {}
    entries: list[Entry] = []
    for module_name, audience in MODULES:
        module = importlib.import_module(module_name)
        for name in public_names(module):
            obj = getattr(module, name)
            key = (name, id(obj))
            if key in seen:
                seen[key].also.append(module_name)
                continue
            entry = Entry(name, module_name, audience, summary(obj))
            seen[key] = entry
            entries.append(entry)
    return entries


def moved() -> list[tuple[str, str, str]]:
    """Names still importable from an old home with a DeprecationWarning: (old module, name, new module)."""
    out: list[tuple[str, str, str]] = []
    for module_name, _ in MODULES:
        module = importlib.import_module(module_name)
        for name, home in sorted(getattr(module, "_MOVED", {}).items()):
            out.append((module_name, name, home))
    return out


def render() -> str:
    lines = [BEGIN, "", "| name | home | audience | also importable from | what it is |", "|---|---|---|---|---|"]
    for e in surface():
        also = ", ".join(f"`{m}`" for m in e.also)
        lines.append(f"| `{e.name}` | `{e.home}` | {e.audience} | {also} | {e.summary} |")
    lines += ["", "Moved names (the old import still works, with a `DeprecationWarning` naming the new home):", ""]
    lines += ["| old import | new home |", "|---|---|"]
    for old, name, home in moved():
        lines.append(f"| `{old}.{name}` | `{home}.{name}` |")
    lines += ["", END]
    return "\n".join(lines)


def generated_part(text: str) -> str:
    start, end = text.index(BEGIN), text.index(END)
    return text[start : end + len(END)]


def write() -> None:
    text = DOC.read_text()
    DOC.write_text(text.replace(generated_part(text), render()))


if __name__ == "__main__":
    write()
    print(f"rewrote the generated surface in {DOC}", file=sys.stderr)
