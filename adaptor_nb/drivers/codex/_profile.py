"""Where Codex keeps its profile: ``CODEX_HOME`` (default ``~/.codex``); it reads ``skills/<name>/SKILL.md`` there
and lists them to the model in its skills instructions."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ...driver import ProfileLayout


def codex_layout(env: Mapping[str, str], codex_home: str | None) -> ProfileLayout:
    home = env.get("HOME") or os.path.expanduser("~")
    native = os.path.join(home, ".codex")
    configured = os.path.abspath(codex_home) if codex_home else env.get("CODEX_HOME") or native
    return ProfileLayout(
        driver="codex",
        env_var="CODEX_HOME",
        configured_dir=configured,
        native_dir=native,
        skills_dir="skills",
        settings_files=("config.toml",),
        auth_files=("auth.json",),
        mcp=(("config.toml", "mcp_servers"),),
        config_file="config.toml",
    )
