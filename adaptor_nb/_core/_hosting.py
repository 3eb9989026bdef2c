"""The Agent's tool set in the core: checked at construction, hosted lazily for runs, named in fingerprints.

Nothing here imports ``mcp``: the server module loads inside ``ToolHost.ensure()`` on the first run that needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._errors import ConfigError
from .._events import Notice
from ..driver._hosted import HOST_SERVER, HostedTools
from ..driver._spi import Descriptor

__all__ = ["HostedRun", "check_thread_tools", "check_tools", "tool_revisions"]


def check_tools(tools: tuple[Any, ...], mcp: tuple[Any, ...] | None) -> tuple[Any, ...]:
    """The declared set as Tool objects (plain callables are defined on the spot); a clash fails naming both."""
    if not tools:
        return ()
    from ..tools._define import Tool, define

    out: list[Tool] = []
    seen: dict[str, Any] = {}
    for item in tools:
        if not isinstance(item, Tool):
            if not callable(item):
                raise ConfigError(
                    f"tools= takes tool.define(...) results or callables, got {type(item).__name__}: {item!r}",
                    option="tools",
                )
            try:
                item = define(item)
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"tools=: {exc}", option="tools") from None
        if item.name in seen:
            raise ConfigError(
                f"tools=: two tools are named {item.name!r} ({seen[item.name]!r} and {item.fn!r}); give one of "
                "them another name with tool.define(fn, name=...)",
                option="tools",
            )
        seen[item.name] = item.fn
        out.append(item)
    for server in mcp or ():
        name = getattr(server, "name", "")
        if name in seen:
            raise ConfigError(
                f"tools=: tool {name!r} has the same name as the declared mcp server {name!r}; rename one of them",
                option="tools",
            )
        if name == HOST_SERVER:
            raise ConfigError(
                f"mcp server {name!r} clashes with the server that hosts tools=[...] under that name; rename it",
                option="mcp",
            )
    missing = _missing_extra()
    if missing:
        raise ConfigError(
            f"tools= needs the 'tools' extra ({', '.join(missing)} cannot be imported): install it with "
            "pip install 'adaptor_nb[tools]'",
            option="tools",
        )
    return tuple(out)


def _missing_extra() -> list[str]:
    """The packages of the ``tools`` extra that cannot be found (found, not imported: the import waits for a run)."""
    import importlib.util

    missing = []
    for name in ("mcp", "uvicorn"):
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a module hidden or half-installed
            found = False
        if not found:
            missing.append(name)
    return missing


def check_thread_tools(tools: tuple[Any, ...]) -> None:
    """Section 11.1: every tool a Thread uses has a semantic revision (it enters the Thread's compatibility)."""
    missing = [t.name for t in tools if not getattr(t, "revision_given", True)]
    if missing:
        raise ConfigError(
            f"tools {missing} have no revision, and a Thread needs one for each tool it uses (a changed tool must "
            'not silently continue a conversation): define them with tool.define(fn, revision="1")',
            option="tools",
        )


def tool_revisions(tools: tuple[Any, ...]) -> list[list[str]]:
    """What of the tool set enters a Thread's compatibility fingerprint: names and revisions."""
    return sorted([t.name, t.revision] for t in tools)


class HostedRun:
    """One execution's use of the Agent's tool host."""

    def __init__(self, host: Any, key: str) -> None:
        self._host = host
        self._key = key
        self.hosted: HostedTools | None = None

    async def start(self, desc: Descriptor, notice: Callable[[Notice], None]) -> HostedTools | None:
        if self._host is None or not self._host.tools:
            return None
        if not desc.host_tools:
            raise ConfigError(
                f"driver {desc.name!r} cannot host Python tools (its Descriptor does not declare host_tools); "
                "remove tools=",
                option="tools",
            )
        await self._host.ensure(http=not desc.host_tools_channel)
        self._host.attach(self._key, notice)
        self.hosted = self._host.hosted(self._key)
        return self.hosted

    def end(self, *, cancel: bool) -> None:
        if self.hosted is not None:
            self._host.detach(self._key, cancel=cancel)
            if not cancel:
                self.hosted = None
