"""Message capability below a driver's known minimum CLI version (§10): the probed version decides, once per
driver object; below the minimum, in-run delivery and interrupts are trimmed and queued input continues through
checkpoint resume, announced by one execution Notice. An unknown version keeps the declared support."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import weakref
from dataclasses import replace
from typing import Any

from .._enums import Boundary, ContinueMode, NoticeKind
from .._events import Notice
from ..driver._spi import Descriptor, MessageCapabilities
from ..driver._tap import replaying

_VERSIONS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
_BY_COMMAND: dict[tuple[str, ...], str] = {}  # drivers of one class running one command share the probe


def _command_key(driver: Any) -> tuple[str, ...] | None:
    """Drivers of one class with the same ``config.command`` and ``config.env`` (never ``secret_env``) run the
    same CLI; None when the driver has no such configuration."""
    config = getattr(driver, "config", None)
    command = getattr(config, "command", None)
    env = getattr(config, "env", None)
    if config is None or not isinstance(env, dict | type(None)):
        return None
    binary = ""
    if command:
        binary = str(command[0])
        with contextlib.suppress(OSError):
            binary += f"@{os.stat(binary).st_mtime_ns}"
    return (
        f"{type(driver).__module__}.{type(driver).__qualname__}",
        repr(list(command or [])),
        binary,
        repr(sorted((env or {}).items())),
        os.environ.get("PATH", ""),
    )


@functools.lru_cache(maxsize=64)
def version_tuple(text: str) -> tuple[int, ...] | None:
    """``"2.1.197 (Claude Code)"`` -> ``(2, 1, 197)``; None when there is no dotted number."""
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if not m:
        return None
    return tuple(int(g) for g in m.groups() if g is not None)


def below(version: str, minimum: str) -> bool:
    """True only when both versions parse and ``version`` is lower than ``minimum``."""
    v, lo = version_tuple(version), version_tuple(minimum)
    return v is not None and lo is not None and v < lo


def trimmed(caps: MessageCapabilities) -> MessageCapabilities:
    """What is left without in-run delivery: turn-end input, continued by checkpoint resume."""
    return replace(
        caps,
        boundaries=frozenset(caps.boundaries - {Boundary.IN_RUN}) | {Boundary.TURN_END},
        interrupt=False,
        continue_mode=ContinueMode.RESUME,
    )


async def probed_version(driver: Any) -> str:
    """The CLI version the driver's probe reports, probed once per driver object ("" when unknown)."""
    try:
        known = _VERSIONS.get(driver)
    except TypeError:
        known = None
    if known is not None:
        return known  # probed for this driver object already: its command is not looked at again
    key = _command_key(driver)
    if key is not None:
        known = _BY_COMMAND.get(key)
    if known is not None:
        return known
    version = ""
    conclusive = False
    try:
        report = await driver.probe_environment()
        version = report.version or ""
        conclusive = bool(version) or not any(_inconclusive(c) for c in report.checks)
    except Exception:  # a probe that fails leaves the version unknown: declared support is kept
        version = ""
    try:
        _VERSIONS[driver] = version
    except TypeError:
        pass
    if key is not None and conclusive:  # a CLI that answers no version is not asked again on every run
        _BY_COMMAND[key] = version
    return version


def _inconclusive(check: Any) -> bool:
    """A version check that raised (a timeout, a CLI that could not start) may answer another time."""
    detail = str(getattr(check, "detail", ""))
    return getattr(check, "name", "") == "version" and re.match(r"\w+Error: ", detail) is not None


async def check_message_version(driver: Any, desc: Descriptor) -> tuple[MessageCapabilities, Notice] | None:
    """The trimmed capabilities and their Notice when the driver's CLI is older than its known minimum."""
    caps = desc.messages
    if not caps.min_version or (Boundary.IN_RUN not in caps.boundaries and not caps.interrupt):
        return None
    if getattr(driver, "probe_environment", None) is None:  # what isinstance(driver, EnvironmentProbe) checks
        return None
    if replaying():
        # A replayed run does what the recorded CLI did, whatever CLI (if any) is installed here; with a cassette
        # in mode once this also skips the probe for a run that ends up recorded (the plan is made later).
        return None
    version = await probed_version(driver)
    if not below(version, caps.min_version):
        return None
    notice = Notice(
        kind=NoticeKind.LIFECYCLE.value,
        text=(
            f"{desc.name} CLI {version} is older than {caps.min_version}: messages sent during a run wait for the "
            "turn's end and continue by resuming the session"
        ),
        metadata={"code": "messages.trimmed", "version": version, "min_version": caps.min_version},
    )
    return trimmed(caps), notice
