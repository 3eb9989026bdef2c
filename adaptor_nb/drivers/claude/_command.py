"""The argv, environment and working directory of one Claude Code process, and the fingerprint that decides reuse."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any

from ...driver import (
    ConfigError,
    FeatureLevel,
    Invocation,
    SandboxLevel,
    check_bearer_envs,
)
from ._config import Config
from ._mcp import mcp_args

# The CLI tools that cannot change files or run programs; a read-only run is offered only these.
READ_ONLY_TOOLS = ("Read", "Glob", "Grep", "WebFetch", "WebSearch", "AskUserQuestion")
# Environment variables of an enclosing Claude Code session that would confuse a child CLI.
_STRIPPED_ENV = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT")


@dataclass(frozen=True)
class Launch:
    """Everything needed to start one CLI process; ``fingerprint`` is equal for interchangeable processes."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    fingerprint: str
    schema: bool

    def with_resume(self, session_id: str, *, fork: bool = False) -> list[str]:
        """The argv that resumes ``session_id`` (optionally as a fork)."""
        if not session_id:
            return list(self.argv)
        extra = ["--resume", session_id]
        if fork:
            extra.append("--fork-session")
        return [*self.argv, *extra]


def cli_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with every nested ``$defs`` moved to the root, where ``#/$defs/...`` references point.

    The CLI silently drops its StructuredOutput tool when a reference does not resolve (for example a wrapped
    ``list[Model]`` schema whose definitions sit under ``properties.items``).
    """
    found: dict[str, Any] = {}

    def strip(node: Any, root: bool) -> Any:
        if isinstance(node, dict):
            out = {}
            for k, v in node.items():
                if k == "$defs" and not root and isinstance(v, dict):
                    found.update(v)
                    continue
                out[k] = strip(v, False)
            return out
        if isinstance(node, list):
            return [strip(v, False) for v in node]
        return node

    result: dict[str, Any] = strip(schema, True)
    if found:
        defs = dict(result.get("$defs") or {})
        for name, body in found.items():
            defs.setdefault(name, body)
        result["$defs"] = defs
    return result


def instructions_for(config: Config, inv: Invocation) -> str:
    """Config-level instructions followed by the run's own."""
    parts = [p.strip() for p in (config.instructions, inv.instructions) if p and p.strip()]
    return "\n\n".join(parts)


def build_launch(config: Config, command: list[str], inv: Invocation) -> Launch:
    """Turn the configuration and one invocation into a Launch; raises ConfigError for an unusable workspace."""
    cwd = inv.workspace or config.cwd or os.getcwd()
    if not os.path.isdir(cwd):
        raise ConfigError(f"claude: the workspace {cwd!r} is not a directory", option="workspace")
    argv = [
        *command,
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--replay-user-messages",
        "--permission-prompt-tool",
        "stdio",
    ]
    if config.partial_messages:
        argv.append("--include-partial-messages")
    model = inv.model or config.model
    if model:
        argv += ["--model", model]
    if config.effort:
        argv += ["--effort", config.effort]
    if config.max_turns_per_run:
        argv += ["--max-turns", str(config.max_turns_per_run)]
    if config.permission_mode != "default":
        argv += ["--permission-mode", config.permission_mode]
    if config.bare:
        argv.append("--bare")
    instructions = instructions_for(config, inv)
    if instructions:
        argv += ["--append-system-prompt", instructions]
    if inv.output_schema is not None:
        schema = cli_schema(inv.output_schema.schema)
        argv += ["--json-schema", json.dumps(schema, separators=(",", ":"), sort_keys=True)]
    disallowed = list(config.disallowed_tools)
    policy = inv.policy
    if policy.sandbox is SandboxLevel.READ_ONLY:
        tools = [t for t in READ_ONLY_TOOLS if not (t == "WebSearch" and policy.web_search is FeatureLevel.DENY)]
        argv += ["--tools", ",".join(tools)]
    if policy.web_search is FeatureLevel.DENY and "WebSearch" not in disallowed:
        disallowed.append("WebSearch")
    if config.allowed_tools:
        argv += ["--allowedTools", ",".join(config.allowed_tools)]
    if disallowed:
        argv += ["--disallowedTools", ",".join(disallowed)]
    for d in config.add_dirs:
        argv += ["--add-dir", d]
    mcp_argv, mcp_secrets = mcp_args(inv.mcp, inv.tools)
    argv += mcp_argv
    argv += config.extra_args
    env = {k: v for k, v in os.environ.items() if k not in _STRIPPED_ENV}
    env.update(config.env)
    env.update(inv.env)
    env.update(config.secret_env)
    check_bearer_envs(inv.mcp or (), env, "claude")
    env.update(mcp_secrets)  # the values the --mcp-config JSON names as ${VAR}: never on the command line
    digest = hashlib.sha256()
    digest.update(json.dumps([argv, os.path.realpath(cwd)]).encode())
    for k in sorted(env):
        digest.update(b"\0" + k.encode() + b"=" + env[k].encode())
    return Launch(argv=argv, env=env, cwd=cwd, fingerprint=digest.hexdigest(), schema=inv.output_schema is not None)


def config_fingerprint(config: Config) -> str:
    """What about the configuration makes a saved session incompatible (no secrets, no paths to binaries)."""
    data = {
        "driver": "claude",
        "bare": config.bare,
        "permission_mode": config.permission_mode,
        "allowed_tools": sorted(config.allowed_tools),
        "disallowed_tools": sorted(config.disallowed_tools),
        "add_dirs": list(config.add_dirs),
        "extra_args": list(config.extra_args),
        "instructions": config.instructions,
        "effort": config.effort,
        "max_turns_per_run": config.max_turns_per_run,
    }
    return "claude:" + hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:32]
