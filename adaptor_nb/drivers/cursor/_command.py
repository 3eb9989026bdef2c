"""The argv, environment, stdin and working directory of one Cursor Agent process, and the config fingerprint."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass

from ...driver import ConfigError, Invocation, check_bearer_envs
from ._approvals import force_flag
from ._config import Config
from ._mcp import mcp_config, mcp_flags


@dataclass(frozen=True)
class Launch:
    """Everything needed to start one turn's process; the prompt goes to stdin, never argv."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    stdin: bytes
    resume: str


def instructions_for(config: Config, inv: Invocation) -> str:
    """Config-level instructions followed by the run's own."""
    parts = [p.strip() for p in (config.instructions, inv.instructions) if p and p.strip()]
    return "\n\n".join(parts)


def workspace_for(config: Config, inv: Invocation) -> str:
    """The directory the CLI works in, passed explicitly as ``--workspace``; ConfigError when it is not one."""
    cwd = os.path.abspath(inv.workspace or config.cwd or os.getcwd())
    if not os.path.isdir(cwd):
        raise ConfigError(f"cursor: the workspace {cwd!r} is not a directory", option="workspace")
    return cwd


def build_launch(config: Config, command: list[str], inv: Invocation) -> Launch:
    """Turn the configuration and one invocation into a Launch."""
    cwd = workspace_for(config, inv)
    argv = [*command, "-p", "--output-format", "stream-json"]
    if config.partial_output:
        argv.append("--stream-partial-output")
    argv += ["--workspace", cwd]
    if config.trust:
        argv.append("--trust")
    resume = inv.resume.session_id if inv.resume is not None else ""
    if resume:
        argv += ["--resume", resume]
    model = inv.model or config.model
    if model:
        argv += ["--model", model]
    if config.mode:
        argv += ["--mode", config.mode]
    argv += force_flag(inv.policy)
    argv += mcp_flags(inv.mcp, inv.tools)
    argv += config.extra_args
    prompt = inv.prompt
    instructions = instructions_for(config, inv)
    if instructions and not resume:
        # Cursor has no system-prompt flag: a fresh session starts with the instructions ahead of the prompt.
        prompt = f"{instructions}\n\n{prompt}"
    env = dict(os.environ)
    env.update(config.env)
    env.update(inv.env)
    env.update(config.secret_env)
    if inv.mcp is not None:
        check_bearer_envs(inv.mcp, env, "cursor")
        env.update(mcp_config(inv.mcp)[1])  # the values .cursor/mcp.json names as ${env:VAR}, never in the file
    if inv.tools is not None:
        check_host_approvals(inv)
        env.update(inv.tools.env)  # the bearer token, named in .cursor/mcp.json as ${env:<token_env>}
    return Launch(argv=argv, env=env, cwd=cwd, stdin=prompt.encode(), resume=resume)


def check_host_approvals(inv: Invocation) -> None:
    """Cursor cannot ask before a tool call: a host tool with ``requires_approval=True`` runs only when the policy
    auto-approves (``--force``); under any other policy the run is refused before launch instead of calling it
    unasked."""
    hosted = inv.tools
    if hosted is None or not hosted.approval or force_flag(inv.policy):
        return
    raise ConfigError(
        f"cursor: the host tools {sorted(hosted.approval)} need approval, which Cursor Agent cannot ask for in "
        "print mode; use a policy that auto-approves permissions, or define them without requires_approval",
        option="tools",
    )


def config_fingerprint(config: Config) -> str:
    """What about the configuration makes a saved session incompatible (mode, instructions, extra flags)."""
    data = {
        "driver": "cursor",
        "mode": config.mode or "agent",
        "cwd": os.path.realpath(config.cwd) if config.cwd else "",
        "extra_args": list(config.extra_args),
        "instructions": config.instructions,
    }
    return "cursor:" + hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:32]
