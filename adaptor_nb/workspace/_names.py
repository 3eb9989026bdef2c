"""Branch names from a template, made safe for git, and the worktree directory named after them."""

from __future__ import annotations

import hashlib
import re

from .._errors import ConfigError

_UNSAFE = re.compile(r"[^A-Za-z0-9._/-]+")
_FIELDS = ("thread", "run", "row")


def sanitize_part(value: str) -> str:
    """One template value as a branch-name component: unsafe characters become ``-`` (slashes too)."""
    out = _UNSAFE.sub("-", value.replace("/", "-")).strip("-.")
    return out or "x"


def sanitize_branch(name: str) -> str:
    """A valid branch name (``git check-ref-format --branch``) close to ``name``."""
    parts = []
    for part in _UNSAFE.sub("-", name).split("/"):
        part = re.sub(r"\.{2,}", ".", part).strip("-.")
        if part.endswith(".lock"):
            part = part[: -len(".lock")] + "-lock"
        if part:
            parts.append(part)
    if not parts:
        raise ConfigError(f"the branch template gives no usable branch name ({name!r})", option="workspace_spec")
    return "/".join(parts)


def branch_name(template: str, *, thread: str, run: str, row: str) -> str:
    """Fill ``{thread}``, ``{run}`` and ``{row}`` (each sanitized) and sanitize the result."""
    values = {"thread": thread or row or run, "run": run, "row": row or run}
    try:
        filled = template.format(**{k: sanitize_part(values[k]) for k in _FIELDS})
    except (KeyError, IndexError, ValueError) as exc:
        raise ConfigError(
            f"branch_template {template!r} may use only {{thread}}, {{run}} and {{row}}: {exc}",
            option="workspace_spec",
        ) from None
    return sanitize_branch(filled)


def directory_name(branch: str) -> str:
    """The worktree's directory name for ``branch`` (slashes become ``-``)."""
    return branch.replace("/", "-")


def identity(template: str, *, thread: str, run: str, row: str) -> str:
    """What a worktree stands for: the branch template filled with the values as given (not sanitized), so two
    thread keys that sanitize to one branch name still differ here."""
    values = {"thread": thread or row or run, "run": run, "row": row or run}
    return template.format(**values)


def distinct_branch(branch: str, identity: str) -> str:
    """``branch`` made distinct for ``identity``, when the plain name already belongs to another one."""
    return f"{branch}-{hashlib.sha256(identity.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"
