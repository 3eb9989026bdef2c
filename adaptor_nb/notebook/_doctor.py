"""``%agent doctor``: one view of every installed driver as its Inspector reports it (CLI, version, auth source,
models, quota, profile state), without starting a model task."""

from __future__ import annotations

import asyncio
from typing import Any

from ._defaults import ProbeOutcome, inspect_driver
from ._help import DRIVER_NAMES

STEP_TIMEOUT = 20.0


async def _bounded(coro: Any, what: str) -> tuple[Any, str]:
    try:
        return await asyncio.wait_for(coro, STEP_TIMEOUT), ""
    except Exception as exc:
        return None, f"{what} unavailable ({type(exc).__name__}: {exc})"


async def driver_section(outcome: ProbeOutcome) -> list[str]:
    """The lines for one driver: its probe, then (when usable) models, quota and profile state."""
    from .._agent import Agent

    lines = [outcome.summary()]
    report = outcome.report
    if report is not None:
        lines.append(f"  CLI: {' '.join(getattr(report, 'command', ())) or 'unknown'}")
        lines.append(f"  auth source: {getattr(report, 'auth_source', '') or 'none found'}")
        messages = getattr(report, "messages", None)
        if messages is not None and messages.min_version:
            lines.append(f"  messages: needs CLI {messages.min_version} or later for in-run delivery")
    if outcome.driver is None:
        fix = outcome.fix()
        return [*lines, f"  to use it: {fix}"] if fix else lines
    agent = Agent(outcome.driver)
    try:
        inspector = agent.inspect()
        models, why = await _bounded(inspector.models(), "models")
        if why:
            lines.append(f"  models: {why}")
        else:
            shown = ", ".join(m.id + (" (default)" if m.default else "") for m in models[:12])
            more = f" and {len(models) - 12} more" if len(models) > 12 else ""
            lines.append(f"  models: {shown + more if models else 'the driver cannot list them'}")
        quota, why = await _bounded(inspector.quota(), "quota")
        lines.append(f"  quota: {why or (quota.detail or quota.status.value)}")
        state = await agent.profile_state()
        where = state.profile.directory or "no profile folder"
        lines.append(f"  profile: {state.profile.identity} ({state.kind.value}) at {where}")
        skills = next((r for r in state.resources if r.kind.value == "skills"), None)
        if skills is not None:
            installed = ", ".join(skills.external) or "none"
            lines.append(f"  skills in the profile: {installed}")
    finally:
        await agent.close()
    return lines


async def doctor_report(names: tuple[str, ...] = DRIVER_NAMES) -> str:
    outcomes = await asyncio.gather(*(inspect_driver(name) for name in names))
    sections = await asyncio.gather(*(driver_section(o) for o in outcomes))
    return "\n".join(["adaptor_nb doctor:", *(line for section in sections for line in section)])
