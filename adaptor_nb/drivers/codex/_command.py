"""Finds the Codex executable (the native binary behind the npm launcher) and builds the app-server argv."""

from __future__ import annotations

import os
import platform
import sys

from ...driver import (
    resolve_command,
)

INSTALL_HINT = "Install it with `npm install -g @openai/codex` or pass Config(command=[path])."

_TARGETS = {
    ("linux", "x86_64"): ("x86_64-unknown-linux-musl", "linux-x64"),
    ("linux", "aarch64"): ("aarch64-unknown-linux-musl", "linux-arm64"),
    ("linux", "arm64"): ("aarch64-unknown-linux-musl", "linux-arm64"),
    ("darwin", "x86_64"): ("x86_64-apple-darwin", "darwin-x64"),
    ("darwin", "arm64"): ("aarch64-apple-darwin", "darwin-arm64"),
}


def native_binary(path: str) -> str:
    """The native Codex binary the npm launcher at ``path`` would run, or ``path`` itself if it is not a launcher.

    Running the native binary directly starts faster and makes the spawned PID the real app-server.
    """
    real = os.path.realpath(path)
    if not real.endswith(".js"):
        return path
    target = _TARGETS.get((sys.platform, platform.machine().lower()))
    if target is None:
        return path
    triple, suffix = target
    package_root = os.path.dirname(os.path.dirname(real))
    scope = os.path.dirname(package_root)
    candidates = (
        os.path.join(scope, f"codex-{suffix}", "vendor", triple, "bin", "codex"),
        os.path.join(package_root, "node_modules", "@openai", f"codex-{suffix}", "vendor", triple, "bin", "codex"),
        os.path.join(package_root, "vendor", triple, "bin", "codex"),
    )
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return path


def codex_command(command: list[str] | None) -> list[str]:
    """The argv prefix that runs Codex: ``command`` if given, else ``codex`` from PATH, launcher resolved to native."""
    resolved = resolve_command(command, "codex", INSTALL_HINT, "codex")
    if command and len(command) > 1:
        return resolved
    return [native_binary(resolved[0]), *resolved[1:]]
