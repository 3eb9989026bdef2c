"""Where CodeBuddy Code keeps its profile: ``CODEBUDDY_CONFIG_DIR`` (default ``~/.codebuddy``), skills in
``skills/`` (the Claude Code layout)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ...driver import ProfileLayout


def codebuddy_layout(env: Mapping[str, str]) -> ProfileLayout:
    home = env.get("HOME") or os.path.expanduser("~")
    native = os.path.join(home, ".codebuddy")
    return ProfileLayout(
        driver="codebuddy",
        env_var="CODEBUDDY_CONFIG_DIR",
        configured_dir=env.get("CODEBUDDY_CONFIG_DIR") or native,
        native_dir=native,
        skills_dir="skills",
        settings_files=("settings.json",),
        auth_files=("models.json",),  # where the driver's probe finds configured model credentials
        mcp=(),  # no documented MCP file to copy: CopyMCP brings nothing for CodeBuddy
        agents_dir="agents",
        hooks_key="hooks",
        config_file="settings.json",
    )
