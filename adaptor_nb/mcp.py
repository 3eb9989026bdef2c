"""MCP server declarations for ``mcp=[...]``: a local process on stdio, or a remote server over HTTP or SSE.

Example::

    from adaptor_nb import mcp
    agent = Agent(driver, mcp=[mcp.Stdio("docs", "docs-mcp", args=["--readonly"], env={"DOCS_TOKEN": token})])

``mcp=[...]`` replaces the whole set (on the Agent or per call), ``mcp=[]`` clears it and ``None`` inherits. Values
of ``env`` and ``headers`` are treated as secrets: they reach the server but never events, transcripts or reprs.
A malformed declaration raises :class:`~adaptor_nb.InvalidMCPConfigError` (``option="mcp"``) naming the server
and the field, before any process starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ._errors import InvalidMCPConfigError

__all__ = ["HTTP", "SSE", "Server", "Stdio", "validate_servers"]

# Both CLIs name tools ``mcp__<server>__<tool>`` and providers accept [A-Za-z0-9_-]{1,64} as a tool name.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def _bad(server: str, field_name: str, why: str) -> InvalidMCPConfigError:
    label = f"mcp server {server!r}" if isinstance(server, str) and server else "an mcp server"
    return InvalidMCPConfigError(
        f"{label}: {field_name} {why}", option="mcp", details={"server": server, "field": field_name}
    )


def _check_name(name: Any) -> None:
    if not isinstance(name, str) or not name:
        raise _bad("", "name", f"must be a non-empty string, got {name!r}")
    if not _NAME.match(name) or "__" in name:
        raise _bad(
            name,
            "name",
            "must be 1-48 letters, digits, '_' or '-', start with a letter or digit and hold no '__' "
            "(the CLIs build tool names as mcp__<server>__<tool>)",
        )


def _strings(server: str, field_name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | Iterable):
        raise _bad(server, field_name, f"must be a list of strings, got {type(value).__name__}")
    items = tuple(value)
    for item in items:
        if not isinstance(item, str) or "\0" in item:
            raise _bad(server, field_name, f"must hold only strings without NUL, got {type(item).__name__}")
    return items


def _mapping(server: str, field_name: str, value: Any, key: re.Pattern[str], what: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise _bad(server, field_name, f"must map names to strings, got {type(value).__name__}")
    out: dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(k, str) or not key.match(k):
            raise _bad(server, field_name, f"has {k!r}, which is not a valid {what} name")
        if not isinstance(v, str):
            raise _bad(server, f"{field_name}[{k!r}]", f"must be a string, got {type(v).__name__}")
        if "\0" in v or (field_name == "headers" and ("\r" in v or "\n" in v)):
            raise _bad(server, f"{field_name}[{k!r}]", "holds a control character that cannot be passed on")
        out[k] = v
    return out


def _hidden(mapping: Mapping[str, str]) -> str:
    return "{" + ", ".join(f"{k!r}: <hidden>" for k in mapping) + "}"


@dataclass(frozen=True, eq=True, repr=False)
class Stdio:
    """A server the CLI starts as a child process and talks to over stdin/stdout.

    ``env`` is added to the server's environment (its values are secrets); ``required`` makes a server that fails
    to start fail the run instead of just lacking its tools.
    """

    name: str
    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    required: bool = False

    transport: ClassVar[str] = "stdio"

    def __post_init__(self) -> None:
        _check_name(self.name)
        if not isinstance(self.command, str) or not self.command.strip() or "\0" in self.command:
            raise _bad(self.name, "command", f"must be a non-empty string, got {self.command!r}")
        object.__setattr__(self, "args", _strings(self.name, "args", self.args))
        object.__setattr__(self, "env", _mapping(self.name, "env", self.env, _ENV_NAME, "environment variable"))
        _check_required(self.name, self.required)

    def __repr__(self) -> str:
        return (
            f"mcp.Stdio(name={self.name!r}, command={self.command!r}, args={list(self.args)!r}, "
            f"env={_hidden(self.env)}, required={self.required!r})"
        )

    def __hash__(self) -> int:
        return hash((self.transport, self.name, self.command, tuple(self.args), tuple(sorted(self.env.items()))))


@dataclass(frozen=True, eq=True, repr=False)
class _Remote:
    name: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    bearer_token_env: str = ""
    required: bool = False

    transport: ClassVar[str] = ""

    def __post_init__(self) -> None:
        _check_name(self.name)
        if not isinstance(self.url, str):
            raise _bad(self.name, "url", f"must be a string, got {type(self.url).__name__}")
        from urllib.parse import urlsplit

        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise _bad(self.name, "url", f"must be an http:// or https:// URL with a host, got {self.url!r}")
        headers = _mapping(self.name, "headers", self.headers, _HEADER_NAME, "HTTP header")
        object.__setattr__(self, "headers", headers)
        if not isinstance(self.bearer_token_env, str) or (
            self.bearer_token_env and not _ENV_NAME.match(self.bearer_token_env)
        ):
            why = f"must be an environment variable name, got {self.bearer_token_env!r}"
            raise _bad(self.name, "bearer_token_env", why)
        if self.bearer_token_env and any(k.lower() == "authorization" for k in headers):
            raise _bad(self.name, "bearer_token_env", "cannot be combined with an Authorization header")
        _check_required(self.name, self.required)

    def __repr__(self) -> str:
        kind = type(self).__name__
        return (
            f"mcp.{kind}(name={self.name!r}, url={self.url!r}, headers={_hidden(self.headers)}, "
            f"bearer_token_env={self.bearer_token_env!r}, required={self.required!r})"
        )

    def __hash__(self) -> int:
        return hash((self.transport, self.name, self.url, tuple(sorted(self.headers.items())), self.bearer_token_env))


def _check_required(name: str, required: Any) -> None:
    if not isinstance(required, bool):
        raise _bad(name, "required", f"must be True or False, got {required!r}")


@dataclass(frozen=True, eq=True, repr=False)
class HTTP(_Remote):
    """A remote server over streamable HTTP. ``headers`` values are secrets; ``bearer_token_env`` names an
    environment variable of the CLI process whose value is sent as ``Authorization: Bearer ...``."""

    transport: ClassVar[str] = "http"
    __hash__ = _Remote.__hash__


@dataclass(frozen=True, eq=True, repr=False)
class SSE(_Remote):
    """A remote server over the older HTTP+SSE transport (same fields as :class:`HTTP`)."""

    transport: ClassVar[str] = "sse"
    __hash__ = _Remote.__hash__


Server = Stdio | HTTP | SSE
"""Any MCP server declaration."""


def validate_servers(servers: Iterable[Any]) -> tuple[Server, ...]:
    """Check a whole set: every item is a declaration and no name is used twice."""
    out: list[Server] = []
    seen: set[str] = set()
    for item in servers:
        if not isinstance(item, Stdio | HTTP | SSE):
            raise InvalidMCPConfigError(
                f"mcp= takes mcp.Stdio, mcp.HTTP or mcp.SSE declarations, got {type(item).__name__}: {item!r}",
                option="mcp",
            )
        if item.name in seen:
            raise _bad(item.name, "name", "is given twice; server names must be unique")
        seen.add(item.name)
        out.append(item)
    return tuple(out)
