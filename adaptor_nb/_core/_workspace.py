"""Provisioning of one run (§12): the workspace lease and the runtime services, resolved before launch and
released (bounded) after the run, their errors joining the outcome before Done."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from .._enums import NoticeKind
from .._errors import AdaptorError, ConfigError
from .._events import Notice
from .._result import ServiceReport
from ..services._specs import ServiceRef, ServiceRequest, ServiceSpec
from ..workspace._passthrough import PassthroughWorkspaces
from ..workspace._specs import WorkspaceLease, WorkspaceReleaseMode, WorkspaceRequest, check_spec
from ._options import AgentSettings, RunSettings

RELEASE_TIMEOUT = 30.0


def check_provisioning(agent: AgentSettings, run: RunSettings) -> None:
    """Raise a ConfigError, naming the option, for a spec or service list that cannot be honoured."""
    check_spec(run.workspace_spec)
    if run.services:
        for spec in run.services:
            if not isinstance(spec, ServiceSpec):
                raise ConfigError(f"services= takes ServiceSpec values, got {type(spec).__name__}", option="services")


class RunProvision:
    """The workspace lease and the ensured services of one execution."""

    def __init__(self, agent: AgentSettings, run_id: str, thread_key: str, notice: Callable[[Notice], None]):
        self._manager: Any = agent.workspace_manager or PassthroughWorkspaces()
        self._services: Any = agent.service_manager
        self._run_id = run_id
        self._thread_key = thread_key
        self._notice = notice
        self.lease: WorkspaceLease | None = None
        self.refs: list[ServiceRef] = []
        self._ensured = False
        self.env: dict[str, str] = {}

    @property
    def active(self) -> bool:
        return self.lease is not None and (self.lease.kind != "shared" or self._ensured)

    def _say(self, text: str, **data: Any) -> None:
        self._notice(Notice(kind=NoticeKind.RUNTIME.value, text=text, data=data))

    async def prepare(self, s: RunSettings, driver_type: str, config: Any) -> RunSettings:
        """Resolve the workspace and ensure the services; returns the settings with the resolved workspace (the
        services' MCP servers are in ``mcp_for``). On failure everything acquired is released and the error is
        raised."""
        if s.workspace_spec is None and not s.services and self._services is None:
            return s
        spec = s.workspace_spec
        request = WorkspaceRequest(
            base_cwd=s.workspace,
            spec=spec if spec is not None else _shared(),
            run_id=self._run_id,
            thread_key=self._thread_key,
            metadata=dict(s.metadata),
        )
        resolving = asyncio.ensure_future(self._manager.resolve(request))
        try:
            lease: WorkspaceLease = await asyncio.shield(resolving)
        except asyncio.CancelledError:
            # Cancelled mid-resolve: keep the lease the manager still hands out, so the run's end releases it.
            with contextlib.suppress(Exception):
                self.lease = await resolving
            raise
        self.lease = lease
        if _provisioned(lease):
            verb = "created" if lease.created else "reused"
            self._say(
                f"workspace {lease.path} ({verb}, branch {lease.branch})",
                phase="workspace_ready",
                path=lease.path,
                branch=lease.branch,
                created=lease.created,
            )
        if s.services and self._services is None:
            # Section 12: without a service manager nothing starts and no endpoint is invented; the run goes on.
            self._say(
                f"services= names {len(s.services)} service(s) but the Agent has no service_manager=: none is "
                "started and no endpoint is published",
                phase="services_skipped",
                services=[getattr(spec, "name", "") for spec in s.services],
            )
        elif s.services:
            try:
                await self._ensure(s, driver_type, config, lease)
            except BaseException:
                await self.release()
                raise
        workspace = lease.path if _provisioned(lease) and lease.path else s.workspace
        return replace(s, workspace=workspace)

    def mcp_for(self, declared: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
        """The run's MCP servers: the declared ones plus those the services publish. Service servers are not part
        of the settings, so their per-run endpoints do not change a thread's compatibility."""
        published = tuple(m for r in self.refs for m in r.mcp)
        return (declared or ()) + published if published else declared

    async def _ensure(self, s: RunSettings, driver_type: str, config: Any, lease: WorkspaceLease) -> None:
        req = ServiceRequest(
            run_id=self._run_id,
            driver_type=driver_type,
            agent=s.identity,
            config=config,
            workspace=lease,
            desired=tuple(s.services or ()),
            metadata=dict(s.metadata),
        )
        self._say(f"ensuring {len(req.desired)} service(s)", phase="services_preparing")
        self._ensured = True
        try:
            refs = list(await self._services.ensure(req))
        except AdaptorError:
            raise
        except Exception as exc:
            raise ConfigError(f"the service manager failed: {type(exc).__name__}: {exc}", option="services") from exc
        self.refs = refs
        for r in refs:
            self.env.update(r.env)
            self.env.update(r.secret_env)
        self._say(
            "services ready: " + ", ".join(r.name for r in refs),
            phase="services_ready",
            services=[{"name": r.name, "endpoint": r.endpoint} for r in refs],
        )

    def reports(self) -> list[ServiceReport]:
        return [ServiceReport(name=r.name, state=r.state, endpoint=r.endpoint) for r in self.refs]

    def metadata(self) -> dict[str, str]:
        lease = self.lease
        if lease is None or not _provisioned(lease):
            return {}
        return {"workspace.path": lease.path, "workspace.branch": lease.branch}

    async def release(self) -> list[str]:
        """Release the services, then the workspace, each bounded; returns the errors."""
        errors: list[str] = []
        if self._ensured:
            self._ensured = False
            try:
                await asyncio.wait_for(self._services.release_by_run(self._run_id), RELEASE_TIMEOUT)
            except TimeoutError:
                errors.append(f"service release timed out after {RELEASE_TIMEOUT:g} s")
            except Exception as exc:
                errors.append(f"service release: {type(exc).__name__}: {exc}")
            else:
                self._say("services released", phase="services_released")
        lease, self.lease = self.lease, None
        if lease is not None and lease.kind != "shared":
            mode = lease.on_release if isinstance(lease.on_release, WorkspaceReleaseMode) else WorkspaceReleaseMode.KEEP
            try:
                await asyncio.wait_for(self._manager.release(lease, mode), RELEASE_TIMEOUT)
            except TimeoutError:
                errors.append(f"workspace release timed out after {RELEASE_TIMEOUT:g} s")
            except Exception as exc:
                errors.append(f"workspace release: {type(exc).__name__}: {exc}")
            else:
                if _provisioned(lease):
                    self._say(
                        f"workspace {lease.path} released ({mode.value})",
                        phase="workspace_released",
                        path=lease.path,
                        mode=mode.value,
                    )
        if errors:
            self._say("cleanup failed", phase="cleanup_failed", errors=list(errors))
        return errors


def _provisioned(lease: WorkspaceLease) -> bool:
    """The manager provisioned a workspace of its own (a worktree, or a kind a third-party manager names)."""
    return lease.kind not in ("shared", "driver")


def _shared() -> Any:
    from ..workspace._specs import SharedWorkspace

    return SharedWorkspace()


def check_managers(agent: AgentSettings) -> None:
    """Raise a ConfigError when ``workspace_manager=`` or ``service_manager=`` lacks the protocol's methods, or the
    Agent's ``workspace_spec=`` is not a spec."""
    check_spec(agent.run.workspace_spec)
    for option, value, methods in (
        ("workspace_manager", agent.workspace_manager, ("resolve", "release")),
        ("service_manager", agent.service_manager, ("ensure", "release_by_run", "release_by_labels")),
    ):
        if value is not None and not all(callable(getattr(value, m, None)) for m in methods):
            raise ConfigError(
                f"{option}= must have async methods {', '.join(methods)}; got {type(value).__name__}", option=option
            )


async def finish_provision(
    provision: RunProvision, result: Any, error: BaseException | None
) -> tuple[Any, BaseException | None]:
    """Release after the run; reports and workspace metadata go on the result, cleanup errors join the outcome."""
    from .._enums import FailureReason
    from .._errors import RunError

    target = result if result is not None else (error.result if isinstance(error, RunError) else None)
    if target is not None:
        target._services.extend(provision.reports())
        target.metadata.update(provision.metadata())
    errors = await provision.release()
    if not errors:
        return result, error
    message = "run cleanup failed: " + "; ".join(errors)
    if error is None:
        return None, RunError.for_reason(
            FailureReason.AGENT_ERROR, message, result=result, details={"cleanup_errors": errors}
        )
    if isinstance(error, RunError):
        error.details.setdefault("cleanup_errors", errors)
    error.add_note(message)
    return result, error
