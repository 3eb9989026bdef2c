"""MCP for Cursor Agent: the run's servers go into the workspace's ``.cursor/mcp.json`` while its process runs.

Cursor has no MCP flag; it reads ``.cursor/mcp.json`` in the workspace (and ``~/.cursor/mcp.json``). When a run
declares servers (``mcp=[...]``, even an empty list) the driver writes the project file for the turn's process and
puts back exactly what was there before (the user's own file, or nothing) when the process has exited. Secret values
never enter the file: it names them as ``${env:VAR}``, which Cursor expands from its own environment, where the driver
puts the values. ``--approve-mcps`` lets a headless run use the servers without a prompt. ``mcp=None`` leaves every
file alone.

The Agent's host tools (``Invocation.tools``) join the file as one more HTTP server whose ``Authorization`` header is
``Bearer ${env:<token_env>}``; with ``mcp=None`` they are added to the user's own project servers, which stay.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from typing import Any

from ...driver import (
    ConfigError,
    HostedTools,
    Server,
    Stdio,
    secret_var,
)

TRANSPORTS = frozenset({"stdio", "http", "sse"})
PROJECT_FILE = os.path.join(".cursor", "mcp.json")
BACKUP_SUFFIX = ".adaptor_nb-original"  # the user's own file while ours is in place (survives a crash)
_ABSENT = ".adaptor_nb-absent"  # marks that there was no file before ours (survives a crash)
_active: dict[str, tuple[bytes, int]] = {}  # workspace file -> (content written, runs using it)


def mcp_config(
    servers: tuple[Server, ...], hosted: HostedTools | None = None, base: dict[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """The ``mcp.json`` document for ``servers`` (after the ``base`` table, the user's own servers) and the Agent's
    host tools, and the private environment holding their secret values (the token included)."""
    secrets: dict[str, str] = {}
    table: dict[str, Any] = dict(base or {})
    for s in servers:
        entry: dict[str, Any]
        if isinstance(s, Stdio):
            entry = {"command": s.command, "args": list(s.args)}
            if s.env:
                entry["env"] = {k: _ref(secrets, secret_var(s.name, "env", k), v) for k, v in s.env.items()}
        else:
            entry = {"url": s.url}
            headers = {k: _ref(secrets, secret_var(s.name, "header", k), v) for k, v in s.headers.items()}
            if s.bearer_token_env:
                headers["Authorization"] = "Bearer ${env:" + s.bearer_token_env + "}"
            if headers:
                entry["headers"] = headers
        table[s.name] = entry
    if hosted is not None:
        secrets.update(hosted.env)
        table[hosted.server] = {
            "url": hosted.url,
            "headers": {"Authorization": "Bearer ${env:" + hosted.token_env + "}"},
        }
    return {"mcpServers": table}, secrets


def mcp_flags(servers: tuple[Server, ...] | None, hosted: HostedTools | None = None) -> list[str]:
    """The CLI flag a run with declared servers needs (headless runs cannot approve a server interactively)."""
    return [] if servers is None and hosted is None else ["--approve-mcps"]


def _ref(secrets: dict[str, str], name: str, value: str) -> str:
    secrets[name] = value
    return "${env:" + name + "}"


def render(servers: tuple[Server, ...], hosted: HostedTools | None = None, base: dict[str, Any] | None = None) -> bytes:
    """The exact bytes written to ``.cursor/mcp.json`` (stable, so concurrent runs can share one file)."""
    doc, _ = mcp_config(servers, hosted, base)
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()


def restore_leftover(workspace: str) -> None:
    """Put back the user's file when an earlier process of this library died with ours in place."""
    path = os.path.join(workspace, PROJECT_FILE)
    if path in _active:
        return
    if os.path.exists(path + BACKUP_SUFFIX):
        os.replace(path + BACKUP_SUFFIX, path)
    elif os.path.exists(path + _ABSENT):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
        os.remove(path + _ABSENT)
    _remove_dir_if_ours(os.path.dirname(path))


@contextlib.contextmanager
def project_servers(
    workspace: str, servers: tuple[Server, ...] | None, hosted: HostedTools | None = None
) -> Iterator[str]:
    """Write the run's servers to ``<workspace>/.cursor/mcp.json`` for the block, then restore what was there.

    Yields the file's path ("" when ``servers`` and ``hosted`` are None and nothing is written). Runs in the same
    workspace at the same time may share the file when they declare the same servers; different servers fail before
    launch. With ``servers`` None the host tools' server is added to the user's own project servers.
    """
    if servers is None and hosted is None:
        yield ""
        return
    path = os.path.join(workspace, PROJECT_FILE)
    if path not in _active:
        restore_leftover(workspace)
    base = _user_servers(path) if servers is None else None
    content = render(servers or (), hosted, base)
    shared = _active.get(path)
    if shared is not None:
        if shared[0] != content:
            raise ConfigError(
                f"cursor: another run in {workspace!r} is using different MCP servers right now; Cursor reads them "
                f"from {PROJECT_FILE}, so the two runs cannot have their own sets at the same time",
                option="mcp",
            )
        _active[path] = (content, shared[1] + 1)
    else:
        created_dir = not os.path.isdir(os.path.dirname(path))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.exists(path):
            os.replace(path, path + BACKUP_SUFFIX)
        else:
            open(path + _ABSENT, "wb").close()
        _write(path, content)
        _active[path] = (content, 1)
        if created_dir:
            open(os.path.join(os.path.dirname(path), _ABSENT), "wb").close()
    try:
        yield path
    finally:
        content, users = _active[path]
        if users > 1:
            _active[path] = (content, users - 1)
        else:
            del _active[path]
            _put_back(path)


def _user_servers(path: str) -> dict[str, Any]:
    """The ``mcpServers`` table of the user's own project file (kept aside while ours is in place), or nothing."""
    own = path + BACKUP_SUFFIX if path in _active else path
    try:
        with open(own, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return {}
    table = doc.get("mcpServers") if isinstance(doc, dict) else None
    return dict(table) if isinstance(table, dict) else {}


def _write(path: str, content: bytes) -> None:
    tmp = path + ".adaptor_nb-tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(content)
    os.replace(tmp, path)


def _put_back(path: str) -> None:
    directory = os.path.dirname(path)
    if os.path.exists(path + BACKUP_SUFFIX):
        os.replace(path + BACKUP_SUFFIX, path)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
        with contextlib.suppress(FileNotFoundError):
            os.remove(path + _ABSENT)
    _remove_dir_if_ours(directory)


def _remove_dir_if_ours(directory: str) -> None:
    """Remove ``.cursor/`` when this driver created it and nothing else was put there meanwhile."""
    marker = os.path.join(directory, _ABSENT)
    if not os.path.exists(marker):
        return
    with contextlib.suppress(OSError):
        os.remove(marker)
        os.rmdir(directory)
