"""The environment probe most CLI drivers share: the CLI found, its ``--version``, the credentials, no model task."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from .._errors import ConfigError
from ._probe import EnvironmentStatus, capture_output
from ._spi import EnvironmentCheck, EnvironmentReport, MessageCapabilities


async def probe_cli(
    driver: str,
    command: Callable[[], list[str]],
    env: Mapping[str, str],
    *,
    timeout: float,
    auth: str,
    no_auth: str,
    messages: MessageCapabilities | None = None,
    extra: Iterable[EnvironmentCheck] = (),
    keep_version: bool = False,
) -> EnvironmentReport:
    """Probe a CLI: ``command()`` (validation included) raises ConfigError when it cannot be used.

    ``auth`` names the credential source found ("" for none; ``no_auth`` then says what is missing); ``extra`` are
    the driver's own checks, reported after the common ones. OK needs a version and credentials, else DEGRADED;
    MISSING when there is no usable command. ``keep_version`` keeps the ``--version`` answer on disk per binary
    (see ``_version_cache``), for a CLI slow to answer it.
    """
    checks: list[EnvironmentCheck] = []
    try:
        argv = command()
    except ConfigError as exc:
        checks.append(EnvironmentCheck("cli", False, str(exc)))
        missing = EnvironmentStatus.MISSING
        return EnvironmentReport(driver=driver, status=missing, checks=tuple(checks), messages=messages)
    checks.append(EnvironmentCheck("cli", True, argv[0]))
    version = ""
    try:
        out = await _version_output([*argv, "--version"], env, timeout, keep_version)
        version = out.strip().split()[0] if out.strip() else ""
        checks.append(EnvironmentCheck("version", bool(version), out.strip()))
    except (OSError, TimeoutError) as exc:
        checks.append(EnvironmentCheck("version", False, f"{type(exc).__name__}: {exc}"))
    checks.append(EnvironmentCheck("auth", bool(auth), auth or no_auth))
    checks.extend(extra)
    return EnvironmentReport(
        driver=driver,
        status=EnvironmentStatus.OK if version and auth else EnvironmentStatus.DEGRADED,
        version=version,
        command=tuple(argv),
        auth_source=auth,
        checks=tuple(checks),
        messages=messages,
    )


async def _version_output(argv: list[str], env: Mapping[str, str], timeout: float, keep: bool) -> str:
    if not keep:
        return await capture_output(argv, dict(env), timeout=timeout)
    from . import _version_cache

    key = _version_cache.version_key(argv, env)
    if key is not None:
        kept = _version_cache.cached_output(key)
        if kept is not None:
            return kept
    out = await capture_output(argv, dict(env), timeout=timeout)
    if key is not None:
        _version_cache.keep_output(key, out)
    return out
