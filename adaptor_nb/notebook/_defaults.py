"""The notebook's default driver: Claude or Codex when installed, signed in and healthy, else the offline demo."""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OFFLINE_NOTE = "offline demo driver: scripted replies"
DRIVER_ENV = "ADAPTOR_NB_DRIVER"
PROBE_TIMEOUT = 15.0
_HEALTHY = frozenset({"ok", "ready", "healthy", "available"})


@dataclass
class DriverChoice:
    """A driver picked for notebook cells, the note the view shows, and why other candidates were skipped."""

    name: str
    driver: Any
    note: str = ""
    skipped: dict[str, str] = field(default_factory=dict)


def make_driver(name: str) -> Any:
    """A built-in driver with its default configuration (raises ImportError if that driver is not available)."""
    module = importlib.import_module(f"adaptor_nb.drivers.{name}")
    if name == "reference":
        return module.Driver()
    return module.Driver(module.Config())


def _claude_credentials(env: Mapping[str, str], home: Path) -> str:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        if env.get(var):
            return var
    config_dir = Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    if (config_dir / ".credentials.json").is_file():
        return str(config_dir / ".credentials.json")
    return ""


def _codex_credentials(env: Mapping[str, str], home: Path) -> str:
    for var in ("OPENAI_API_KEY", "CODEX_API_KEY"):
        if env.get(var):
            return var
    auth = Path(env.get("CODEX_HOME") or home / ".codex") / "auth.json"
    if auth.is_file():
        return str(auth)
    return ""


_CREDENTIALS = {"claude": _claude_credentials, "codex": _codex_credentials}


async def probe(name: str, env: Mapping[str, str] | None = None, home: Path | None = None) -> tuple[Any, str]:
    """Return ``(driver, "")`` when ``name`` is installed, has credentials and probes healthy, else ``(None, why)``."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    try:
        driver = make_driver(name)
    except ImportError as exc:
        return None, f"not importable ({exc})"
    except Exception as exc:
        return None, f"cannot be configured ({exc})"
    try:
        driver.validate_config()
    except Exception as exc:
        return None, f"not installed ({exc})"
    source = _CREDENTIALS[name](env, home)
    if not source:
        return None, "no credentials found (no API key in the environment and no CLI login)"
    probe_environment = getattr(driver, "probe_environment", None)
    if probe_environment is not None:
        try:
            report = await asyncio.wait_for(probe_environment(), PROBE_TIMEOUT)
        except Exception as exc:
            return None, f"environment probe failed ({type(exc).__name__}: {exc})"
        status = str(getattr(report, "status", "")).lower()
        if status not in _HEALTHY:
            return None, f"environment probe says {status or 'unknown'}"
    return driver, ""


async def choose_default(env: Mapping[str, str] | None = None, home: Path | None = None) -> DriverChoice:
    """The first usable of Claude and Codex, else the reference driver; ``ADAPTOR_NB_DRIVER`` pins a name."""
    env = os.environ if env is None else env
    pinned = env.get(DRIVER_ENV, "").strip().lower()
    if pinned:
        if pinned == "reference":
            return DriverChoice("reference", make_driver("reference"), OFFLINE_NOTE)
        return DriverChoice(pinned, make_driver(pinned))
    skipped: dict[str, str] = {}
    for name in ("claude", "codex"):
        driver, why = await probe(name, env, home)
        if driver is not None:
            return DriverChoice(name, driver, skipped=skipped)
        skipped[name] = why
    return DriverChoice("reference", make_driver("reference"), OFFLINE_NOTE, skipped)
