"""Known ACP agents: their argv, where their credential comes from, and how to install them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ...driver import InvalidDriverConfigError
from ._config import Config


@dataclass(frozen=True)
class Preset:
    """One known ACP agent: ``argv`` starts it speaking ACP on stdio, ``auth_envs`` are the variables that carry
    its credential (``auth`` says it in words, also for agents that log in otherwise), ``install`` how to get it;
    ``env`` keeps it quiet (no telemetry, no update checks; a Config's own ``env`` wins); ``interrupt`` and
    ``host_tool_validation`` as in Config."""

    name: str
    argv: tuple[str, ...]
    auth_envs: tuple[str, ...]
    auth: str
    install: str
    mode: str = ""
    env: tuple[tuple[str, str], ...] = ()
    interrupt: bool = True
    host_tool_validation: str = ""

    def credential(self, env: Mapping[str, str] | None = None) -> str:
        """The variable that holds this agent's credential in ``env`` (default: this process's), else ""."""
        env = os.environ if env is None else env
        return next((name for name in self.auth_envs if env.get(name)), "")

    def config(self, **fields: Any) -> Config:
        base = Config(
            command=list(self.argv),
            name=self.name,
            mode=self.mode,
            interrupt=self.interrupt,
            host_tool_validation=self.host_tool_validation,
            install_hint=self.install,
            auth_envs=self.auth_envs,
        )
        fields["env"] = {**dict(self.env), **fields.get("env", {})}
        extra = list(fields.pop("extra_args", []))
        cfg = replace(base, **fields)
        return replace(cfg, command=[*(cfg.command or []), *extra]) if extra else cfg


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "qwen",
            ("qwen", "--acp"),
            ("OPENAI_API_KEY", "DASHSCOPE_API_KEY"),
            "OPENAI_API_KEY with --auth-type openai (and --openai-base-url for another endpoint), or `qwen` login",
            "npm install -g @qwen-code/qwen-code@0.24.4",
            mode="default",
            env=(("QWEN_USAGE_STATISTICS_ENABLED", "0"), ("QWEN_TELEMETRY_ENABLED", "0")),
        ),
        Preset(
            "codex",
            ("codex-acp",),
            ("OPENAI_API_KEY", "CODEX_API_KEY"),
            "OPENAI_API_KEY, or `codex login` (CODEX_HOME/auth.json)",
            "npm install -g @zed-industries/codex-acp@0.16.0",
        ),
        Preset(
            "codebuddy",
            ("codebuddy-headless", "--acp"),
            ("CODEBUDDY_API_KEY",),
            "CODEBUDDY_API_KEY, or `codebuddy` login",
            "pip install 'adaptor_nb[codebuddy]' (the codebuddy-agent-sdk wheel ships codebuddy-headless)",
            env=(
                ("DISABLE_TELEMETRY", "1"),
                ("CODEBUDDY_SKIP_BUILTIN_MARKETPLACE", "1"),
                ("DISABLE_AUTOUPDATER", "1"),
                ("CODEBUDDY_DISABLE_AUTO_MEMORY", "1"),
            ),
            # Measured (2.x): after session/cancel it ends every prompt "cancelled" until the cancelled model request
            # has ended, so a message cannot interrupt a turn.
            interrupt=False,
            host_tool_validation="Parameter validation failed",
        ),
        Preset(
            "gemini",
            ("gemini", "--experimental-acp"),
            ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
            "GEMINI_API_KEY or GOOGLE_API_KEY, or `gemini` Google login",
            "npm install -g @google/gemini-cli",
        ),
        Preset(
            "opencode",
            ("opencode", "acp"),
            ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"),
            "a provider key (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...) or `opencode auth login`",
            "npm install -g opencode-ai",
        ),
        Preset(
            "goose",
            ("goose", "acp"),
            ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOSE_PROVIDER"),
            "the provider set up by `goose configure` (or its key variable)",
            "see https://block.github.io/goose/ (goose CLI installer)",
        ),
        Preset(
            "claude",
            ("claude-agent-acp",),
            ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"),
            "ANTHROPIC_API_KEY, or `claude` login",
            "npm install -g @zed-industries/claude-agent-acp",
        ),
        Preset(
            "copilot",
            ("copilot", "--acp"),
            ("GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN"),
            "GH_TOKEN / GITHUB_TOKEN with Copilot access, or `copilot` login",
            "npm install -g @github/copilot",
        ),
        Preset(
            "cursor",
            ("agent", "acp"),
            ("CURSOR_API_KEY",),
            "CURSOR_API_KEY, or `agent login`",
            "curl https://cursor.com/install -fsS | bash",
        ),
    )
}


def preset(name: str, **fields: Any) -> Config:
    """The Config for known agent ``name`` (``extra_args`` are appended to its argv; other keywords set fields).

    Example: ``acp.Driver(acp.preset("qwen", extra_args=["--auth-type", "openai"]))``.
    """
    found = PRESETS.get(name)
    if found is None:
        known = ", ".join(sorted(PRESETS))
        raise InvalidDriverConfigError(f"acp.preset: unknown agent {name!r}; known: {known}", option="preset")
    return found.config(**fields)


__all__ = ["PRESETS", "Preset", "preset"]
