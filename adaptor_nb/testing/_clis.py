"""Find the agent CLIs (``claude``, ``codex``) on PATH or in the project-local npm cache (``.cache/npm``)."""

from __future__ import annotations

import os
import platform
import shutil
from pathlib import Path

__all__ = ["cli_cache_dirs", "find_cli", "find_codebuddy"]

CACHE_ENV = "ADAPTOR_NB_CLI_CACHE"
_CODEX_TARGETS = {
    ("Linux", "x86_64"): ("codex-linux-x64", "x86_64-unknown-linux-musl"),
    ("Linux", "aarch64"): ("codex-linux-arm64", "aarch64-unknown-linux-musl"),
    ("Linux", "arm64"): ("codex-linux-arm64", "aarch64-unknown-linux-musl"),
    ("Darwin", "x86_64"): ("codex-darwin-x64", "x86_64-apple-darwin"),
    ("Darwin", "arm64"): ("codex-darwin-arm64", "aarch64-apple-darwin"),
}


def _walk_up(start: Path) -> list[Path]:
    start = start.resolve()
    return [start, *start.parents]


def cli_cache_dirs() -> list[Path]:
    """npm prefixes to search, in order: $ADAPTOR_NB_CLI_CACHE, then ``.cache/npm`` above cwd and the package."""
    out: list[Path] = []
    env = os.environ.get(CACHE_ENV)
    if env:
        out.append(Path(env).expanduser())
    for start in (Path.cwd(), Path(__file__).parent):
        for d in _walk_up(start):
            cand = d / ".cache" / "npm"
            if (cand / "node_modules").is_dir() and cand not in out:
                out.append(cand)
                break
    return out


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _codex_native(node_modules: Path) -> Path | None:
    target = _CODEX_TARGETS.get((platform.system(), platform.machine()))
    if target is None:
        return None
    pkg, triple = target
    for base in (node_modules / "@openai" / pkg, node_modules / "@openai" / "codex" / "node_modules" / "@openai" / pkg):
        cand = base / "vendor" / triple / "bin" / "codex"
        if _executable(cand):
            return cand
    return None


def _in_cache(name: str, prefix: Path) -> Path | None:
    node_modules = prefix / "node_modules" if (prefix / "node_modules").is_dir() else prefix
    if name == "codex":
        return _codex_native(node_modules)
    cand = node_modules / ".bin" / name
    return cand if _executable(cand) else None


def _codex_from_launcher(launcher: Path) -> Path | None:
    """The native binary next to a ``codex`` node launcher found on PATH (the launcher would hide the real pid)."""
    real = launcher.resolve()
    for d in real.parents:
        if d.name == "node_modules":
            return _codex_native(d)
    return None


def find_cli(name: str) -> str | None:
    """The path of CLI ``name`` ("claude" or "codex"), or None when it is not installed.

    The project-local cache wins over PATH so tests run the pinned version; for codex the native binary is
    returned, not the node launcher.
    """
    if name == "codebuddy":
        return find_codebuddy()
    if name not in ("claude", "codex"):
        raise ValueError(f"find_cli knows 'claude', 'codex' and 'codebuddy', not {name!r}")
    for prefix in cli_cache_dirs():
        found = _in_cache(name, prefix)
        if found is not None:
            return str(found)
    on_path = shutil.which(name)
    if on_path is None:
        return None
    if name == "codex":
        native = _codex_from_launcher(Path(on_path))
        if native is not None:
            return str(native)
    return on_path


def find_codebuddy() -> str | None:
    """CodeBuddy Code: ``$CODEBUDDY_CODE_PATH``, then the ``codebuddy-agent-sdk`` wheel's binary, then PATH."""
    from ..drivers.codebuddy._locate import find_codebuddy as locate

    return locate()
