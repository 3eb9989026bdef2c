"""Runtime services (§12): what a run asks for (``ServiceSpec``), what a manager hands back (``ServiceRef``) and
the ``ServiceManager`` protocol."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .._errors import ConfigError
from .._policy import Identity
from ..workspace._specs import WorkspaceLease


@dataclass(frozen=True)
class ServiceSpec:
    """A service a run relies on. For the built-in ``LocalServices`` manager: ``command`` starts it (``{port}``,
    ``{workspace}`` and ``{run}`` are filled in), ``ready_line`` (a regular expression matched against its output)
    or ``ready_port`` says when it is up, ``env`` and ``secret_env`` go to its process, ``client_env`` and
    ``secret_env`` to the agent's CLI, ``endpoint`` and ``mcp_url`` are published (templated the same way)."""

    name: str
    command: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    secret_env: Mapping[str, str] = field(default_factory=dict, repr=False)
    client_env: Mapping[str, str] = field(default_factory=dict)
    endpoint: str = ""
    mcp_url: str = ""
    ready_line: str = ""
    ready_port: bool = False
    ready_timeout: float = 30.0
    labels: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigError("ServiceSpec.name must be a non-empty string", option="services")
        if isinstance(self.command, str):
            raise ConfigError("ServiceSpec.command is an argv list, not a string", option="services")

    def __repr__(self) -> str:
        hidden = f", secret_env=<{len(self.secret_env)} hidden>" if self.secret_env else ""
        return f"ServiceSpec(name={self.name!r}, command={list(self.command)!r}{hidden})"


@dataclass(frozen=True)
class ServiceRef:
    """A service ensured for a run: its endpoint, the MCP servers it publishes (they reach the driver like declared
    ``mcp=`` servers), ``env`` for the CLI and ``secret_env`` that reaches the CLI's environment only."""

    name: str
    endpoint: str = ""
    state: str = "ready"
    mcp: tuple[Any, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    secret_env: Mapping[str, str] = field(default_factory=dict, repr=False)
    labels: Mapping[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        hidden = f", secret_env=<{len(self.secret_env)} hidden>" if self.secret_env else ""
        return f"ServiceRef(name={self.name!r}, endpoint={self.endpoint!r}, state={self.state!r}{hidden})"


@dataclass(frozen=True)
class ServiceRequest:
    """What ``ensure`` is told: the run, the driver type, the agent's identity, the driver config, the resolved
    workspace, the desired services and the run's metadata."""

    run_id: str
    driver_type: str
    agent: Identity
    config: Any
    workspace: WorkspaceLease
    desired: tuple[ServiceSpec, ...]
    metadata: Mapping[str, str] = field(default_factory=dict)


@runtime_checkable
class ServiceManager(Protocol):
    """Ensures runtime services before launch and releases them after the run."""

    async def ensure(self, request: ServiceRequest) -> Sequence[ServiceRef]: ...

    async def release_by_run(self, run_id: str) -> None: ...

    async def release_by_labels(self, labels: Mapping[str, str]) -> None: ...
