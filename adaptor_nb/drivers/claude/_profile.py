"""Where Claude Code keeps its profile: ``CLAUDE_CONFIG_DIR`` (default ``~/.claude``), skills in ``skills/``."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ...driver import ProfileLayout


def claude_layout(env: Mapping[str, str], driver: str = "claude", var: str = "CLAUDE_CONFIG_DIR") -> ProfileLayout:
    """The layout for the environment the driver launches with (``env`` includes its Config.env)."""
    home = env.get("HOME") or os.path.expanduser("~")
    native = os.path.join(home, ".claude")
    return ProfileLayout(
        driver=driver,
        env_var=var,
        configured_dir=env.get(var) or native,
        native_dir=native,
        skills_dir="skills",
        settings_files=("settings.json",),
        auth_files=(".credentials.json",),
        mcp=((".claude.json", "mcpServers"),),
        agents_dir="agents",
        hooks_key="hooks",
        config_file="settings.json",
    )
