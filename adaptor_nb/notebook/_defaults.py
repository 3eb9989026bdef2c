"""The notebook's default driver: the first built-in CLI driver installed, signed in and healthy, else the demo."""

from __future__ import annotations

import asyncio
import importlib
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._credentials import FIXES as FIXES  # what to set per driver (one table for every check)
from ..driver import EnvironmentStatus

OFFLINE_NOTE = "offline demo driver: scripted replies"
DRIVER_ENV = "ADAPTOR_NB_DRIVER"
PROBE_TIMEOUT = 15.0
_HEALTHY = frozenset({EnvironmentStatus.OK.value, "ready", "healthy", "available"})


@dataclass
class DriverChoice:
    """A driver picked for notebook cells, the note the view shows, and why other candidates were skipped."""

    name: str
    driver: Any
    note: str = ""
    skipped: dict[str, str] = field(default_factory=dict)


def make_driver(name: str, env: Mapping[str, str] | None = None) -> Any:
    """A built-in driver with its default configuration (raises ImportError if that driver is not available).

    ``env`` is added to the CLI's environment (the drivers' ``Config.env``); ``acp:AGENT`` names an ACP preset.
    """
    if name.startswith("acp:"):
        from ..drivers import acp

        return acp.Driver(acp.preset(name[4:], env=dict(env or {})))
    module = importlib.import_module(f"adaptor_nb.drivers.{name}")
    if name == "reference":
        return module.Driver()
    return module.Driver(module.Config(env=dict(env)) if env else module.Config())


def _probe_env(env: Mapping[str, str] | None, home: Path | None) -> dict[str, str]:
    """What the probing driver adds to its environment: the given variables and ``HOME`` (nothing by default)."""
    extra = {} if env is None or env is os.environ else {str(k): str(v) for k, v in env.items()}
    if home is not None:
        extra["HOME"] = str(home)
    return extra


def _why(report: Any) -> str:
    status = str(getattr(report, "status", "") or EnvironmentStatus.UNKNOWN)
    failed = [
        "auth: no credentials found" if c.name == "auth" else f"{c.name}: {c.detail}" if c.detail else c.name
        for c in getattr(report, "checks", ())
        if not c.ok
    ]
    return f"environment probe says {status}" + (f" ({'; '.join(failed)})" if failed else "")


INSTALL = {
    "claude": "install the Claude Code CLI (npm install -g @anthropic-ai/claude-code) so `claude` is on PATH",
    "codex": "install the Codex CLI (npm install -g @openai/codex) so `codex` is on PATH",
    "cursor": "install Cursor Agent with its vendor's installer (curl https://cursor.com/install -fsS | bash)",
    "codebuddy": "pip install 'adaptor_nb[codebuddy]' (the CodeBuddy Code CLI ships in that wheel)",
}


@dataclass
class ProbeOutcome:
    """One driver's probe as the notebook shows it: the usable driver (or None), the report and why not."""

    name: str
    driver: Any = None
    report: Any = None
    why: str = ""

    def fix(self) -> str:
        """How to make the driver usable, in one sentence ("" when it is usable or nothing is known)."""
        if self.driver is not None:
            return ""
        failed = {c.name for c in getattr(self.report, "checks", ()) if not c.ok}
        install, fixes = INSTALL.get(self.name, ""), FIXES.get(self.name, "")
        if self.name.startswith("acp:"):
            from ..drivers import acp

            known = acp.PRESETS.get(self.name[4:])
            install, fixes = (known.install, f"give it its credential: {known.auth}") if known else ("", "")
        if self.report is None or failed & {"cli", "command", "version"}:
            return install
        if "auth" in failed:
            return fixes
        return ""

    def summary(self) -> str:
        """One line for ``%agent status``: found, version, credentials, usable."""
        report = self.report
        if self.name == "reference":
            return "reference: offline demo driver (scripted replies), always usable"
        if report is None:
            return f"{self.name}: not usable: {self.why}"
        checks = {c.name: c for c in getattr(report, "checks", ())}
        cli = checks.get("cli") or checks.get("command")
        found = f"found {cli.detail}" if cli is not None and cli.ok else "CLI not found"
        version = f"version {report.version}" if getattr(report, "version", "") else "no version"
        auth = getattr(report, "auth_source", "")
        credentials = f"credentials from {auth}" if auth else "no credentials"
        verdict = "usable" if self.driver is not None else f"not usable ({self.why})"
        if self.driver is None and not auth and cli is not None and cli.ok:
            verdict = "not usable"
        return f"{self.name}: {found}, {version}, {credentials}: {verdict}"


def acp_on_path() -> tuple[str, ...]:
    """The ``acp:AGENT`` names whose agent binary is on PATH (``%agent status`` lists those)."""
    from ._help import ACP_NAMES

    if not ACP_NAMES:
        return ()
    from ..drivers import acp

    return tuple(n for n in ACP_NAMES if n[4:] in acp.PRESETS and shutil.which(acp.PRESETS[n[4:]].argv[0]))


async def inspect_driver(name: str, env: Mapping[str, str] | None = None, home: Path | None = None) -> ProbeOutcome:
    """Probe driver ``name`` with its own ``probe_environment()``; the outcome holds the driver when it is OK.

    The driver knows its CLI and its credentials (API keys, logins, Bedrock/Vertex, model providers); ``env`` and
    ``home`` are handed to it as extra environment so a caller can probe a given setting.
    """
    if name == "reference":
        return ProbeOutcome(name, make_driver(name))
    extra = _probe_env(env, home)
    try:
        driver = make_driver(name, extra)
    except ImportError as exc:
        return ProbeOutcome(name, why=f"not importable ({exc})")
    except Exception as exc:
        return ProbeOutcome(name, why=f"cannot be configured ({exc})")
    try:
        driver.validate_config()
    except Exception as exc:
        return ProbeOutcome(name, why=f"not installed ({exc})")
    probe_environment = getattr(driver, "probe_environment", None)
    if probe_environment is None:
        return ProbeOutcome(name, driver)
    try:
        report = await asyncio.wait_for(probe_environment(), PROBE_TIMEOUT)
    except Exception as exc:
        return ProbeOutcome(name, why=f"environment probe failed ({type(exc).__name__}: {exc})")
    if str(getattr(report, "status", "")).lower() not in _HEALTHY:
        return ProbeOutcome(name, report=report, why=_why(report))
    if extra:
        driver = make_driver(name)  # the probe's settings are not the notebook's: run with the default config
    return ProbeOutcome(name, driver, report)


async def probe(name: str, env: Mapping[str, str] | None = None, home: Path | None = None) -> tuple[Any, str]:
    """Return ``(driver, "")`` when the driver's own ``probe_environment()`` says OK, else ``(None, why)``."""
    outcome = await inspect_driver(name, env, home)
    return outcome.driver, outcome.why


async def choose_default(env: Mapping[str, str] | None = None, home: Path | None = None) -> DriverChoice:
    """The first usable of Claude, Codex, Cursor and CodeBuddy, else the reference driver.

    ``ADAPTOR_NB_DRIVER`` pins a name."""
    env = os.environ if env is None else env
    pinned = env.get(DRIVER_ENV, "").strip().lower()
    if pinned:
        if pinned == "reference":
            return DriverChoice("reference", make_driver("reference"), OFFLINE_NOTE)
        return DriverChoice(pinned, make_driver(pinned))
    skipped: dict[str, str] = {}
    for name in ("claude", "codex", "cursor", "codebuddy"):
        outcome = await inspect_driver(name, env, home)
        if outcome.driver is not None:
            return DriverChoice(name, outcome.driver, skipped=skipped)
        fix = outcome.fix()
        skipped[name] = outcome.why + (f"; to use it, {fix}" if fix else "")
    return DriverChoice("reference", make_driver("reference"), OFFLINE_NOTE, skipped)
