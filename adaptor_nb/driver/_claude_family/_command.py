"""The argv, environment and working directory of one Claude-family process, and the fingerprint that decides reuse."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..._enums import FeatureLevel, SandboxLevel
from ..._errors import ConfigError
from .._hosted import HostedTools
from .._mcp import check_bearer_envs
from .._spi import Invocation
from ._config import ClaudeFamilyConfig
from ._profile import ClaudeFamilyProfile

# The CLI tools that cannot change files or run programs; a read-only run is offered only these.
READ_ONLY_TOOLS = ("Read", "Glob", "Grep", "WebFetch", "WebSearch", "AskUserQuestion")

# How a driver turns MCP servers and host tools into CLI arguments and a private environment of their secrets.
McpArgs = Callable[[Any, HostedTools | None], tuple[list[str], dict[str, str]]]


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


def instructions_for(config: ClaudeFamilyConfig, inv: Invocation) -> str:
    """Config-level instructions followed by the run's own."""
    parts = [p.strip() for p in (config.instructions, inv.instructions) if p and p.strip()]
    return "\n\n".join(parts)


def build_launch(
    config: ClaudeFamilyConfig, command: list[str], inv: Invocation, profile: ClaudeFamilyProfile, mcp_args: McpArgs
) -> Launch:
    """Turn the configuration and one invocation into a Launch; raises ConfigError for an unusable workspace."""
    cwd = inv.workspace or config.cwd or os.getcwd()
    if not os.path.isdir(cwd):
        raise ConfigError(f"{profile.name}: the workspace {cwd!r} is not a directory", option="workspace")
    argv = [
        *command,
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        *profile.protocol_args,
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
    argv += config.own_flags()
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
    stripped = profile.stripped_env
    env = {k: v for k, v in os.environ.items() if k not in stripped}
    env.update(profile.silent_env)
    env.update(config.env)
    env.update(inv.env)
    env.update(config.secret_env)
    check_bearer_envs(inv.mcp or (), env, profile.name)
    env.update(mcp_secrets)  # the values the --mcp-config JSON names as ${VAR}: never on the command line
    digest = hashlib.sha256()
    digest.update(json.dumps([argv, os.path.realpath(cwd)]).encode())
    for k in sorted(env):
        digest.update(b"\0" + k.encode() + b"=" + env[k].encode())
    return Launch(argv=argv, env=env, cwd=cwd, fingerprint=digest.hexdigest(), schema=inv.output_schema is not None)


def environ_state() -> dict[Any, Any]:
    """A copy of the process environment that is cheap to take and to compare (CPython keeps it encoded in
    ``os.environ._data``; elsewhere the decoded mapping is copied)."""
    data = getattr(os.environ, "_data", None)
    return dict(data) if isinstance(data, dict) else dict(os.environ)


class Launches:
    """Builds the Launch of each send, giving the last one again while nothing it was built from has changed.

    What a Launch is built from: every config field, the resolved command, the invocation's workspace, model,
    instructions, policy and environment, the process environment, the working directory and where it resolves
    to. A send with an output schema, MCP servers or host tools is always built afresh (those hold nested,
    mutable data), as is one whose workspace is not a directory (so it fails as before).
    """

    def __init__(self, profile: ClaudeFamilyProfile, mcp_args: McpArgs) -> None:
        self._last: tuple[tuple[Any, ...], Launch] | None = None
        self.profile = profile
        self.mcp_args = mcp_args

    def build(
        self, config: ClaudeFamilyConfig, command: list[str], inv: Invocation, config_key: tuple[Any, ...]
    ) -> Launch:
        """The Launch for this send; ``config_key`` is ``config_key(config)``, taken by the caller already."""
        key = _inputs(config, command, inv, config_key)
        last = self._last
        if key is not None and last is not None and last[0] == key:
            return last[1]
        launch = build_launch(config, command, inv, self.profile, self.mcp_args)
        self._last = None if key is None else (key, launch)
        return launch


def _inputs(
    config: ClaudeFamilyConfig, command: list[str], inv: Invocation, config_key: tuple[Any, ...]
) -> tuple[Any, ...] | None:
    if inv.output_schema is not None or inv.mcp or inv.tools is not None:
        return None
    cwd = inv.workspace or config.cwd or os.getcwd()
    try:
        st = os.stat(cwd)
    except (OSError, ValueError):
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None
    return (
        config_key,
        tuple(command),
        cwd,
        (st.st_dev, st.st_ino),  # the directory it names now (the fingerprint has its resolved path)
        inv.model,
        inv.instructions,
        inv.policy.sandbox,
        inv.policy.web_search,
        inv.mcp,
        tuple(inv.env.items()),
        environ_state(),
    )


def config_fingerprint(config: ClaudeFamilyConfig) -> str:
    """What about the configuration makes a saved session incompatible (no secrets, no paths to binaries)."""
    data = config.fingerprint_fields()
    return f"{config.DRIVER}:" + hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:32]
