"""Helpers drivers share to hand MCP secrets to a CLI by reference instead of on its command line."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from .._errors import InvalidMCPConfigError
from ..mcp import HTTP, SSE, Server

SECRET_PREFIX = "ADAPTOR_NB_MCP_"


def secret_var(server: str, scope: str, key: str) -> str:
    """A private, stable environment variable name for one secret value of one server."""
    digest = hashlib.sha256(f"{server}\0{scope}\0{key}".encode()).hexdigest()[:16].upper()
    return SECRET_PREFIX + digest


def check_bearer_envs(servers: tuple[Server, ...], env: Mapping[str, str], driver: str) -> None:
    """Refuse, before launch, a ``bearer_token_env`` the CLI process would not have."""
    for s in servers:
        if isinstance(s, HTTP | SSE) and s.bearer_token_env and not env.get(s.bearer_token_env):
            raise InvalidMCPConfigError(
                f"mcp server {s.name!r}: bearer_token_env {s.bearer_token_env!r} is not set in the {driver} process "
                "environment (set it in the environment or in the driver's Config.env / Config.secret_env)",
                option="mcp",
                details={"server": s.name, "field": "bearer_token_env"},
            )
