"""Parameter descriptions from a docstring in Google (``Args:``) or NumPy (``Parameters`` + dashes) style."""

from __future__ import annotations

import inspect
import re

__all__ = ["parse_docstring"]

_GOOGLE_HEAD = re.compile(r"^(Args|Arguments|Parameters|Params)\s*:\s*$")
_GOOGLE_ITEM = re.compile(r"^(\*{0,2}[A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^(\*{0,2}[A-Za-z_][A-Za-z0-9_]*)\s*(:.*)?$")
_SECTION = re.compile(r"^[A-Z][A-Za-z ]*:\s*$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The summary (text before the first section) and a description per parameter name."""
    text = inspect.cleandoc(doc or "")
    if not text:
        return "", {}
    lines = text.splitlines()
    params: dict[str, str] = {}
    summary_end = len(lines)
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if _GOOGLE_HEAD.match(line):
            summary_end = min(summary_end, i)
            i = _google(lines, i + 1, params)
            continue
        if line.strip() in ("Parameters", "Arguments") and i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
            summary_end = min(summary_end, i)
            i = _numpy(lines, i + 2, params)
            continue
        if _SECTION.match(line) or (i + 1 < len(lines) and lines[i + 1].strip() and set(lines[i + 1].strip()) == {"-"}):
            summary_end = min(summary_end, i)
        i += 1
    summary = "\n".join(lines[:summary_end]).strip()
    return summary, params


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google(lines: list[str], i: int, params: dict[str, str]) -> int:
    base: int | None = None
    name = ""
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        ind = _indent(line)
        if base is None:
            if ind == 0:
                return i
            base = ind
        if ind < base:
            return i
        m = _GOOGLE_ITEM.match(line.strip()) if ind == base else None
        if m:
            name = m.group(1).lstrip("*")
            params[name] = m.group(3).strip()
        elif name:
            params[name] = (params[name] + " " + line.strip()).strip()
        i += 1
    return i


def _numpy(lines: list[str], i: int, params: dict[str, str]) -> int:
    name = ""
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if _indent(line) == 0:
            if i + 1 < len(lines) and lines[i + 1].strip() and set(lines[i + 1].strip()) == {"-"}:
                return i
            m = _NUMPY_ITEM.match(line.strip())
            if m is None:
                return i
            name = m.group(1).lstrip("*")
            params[name] = ""
        elif name:
            params[name] = (params[name] + " " + line.strip()).strip()
        i += 1
    return i
