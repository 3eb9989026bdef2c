"""Running the suite: read the descriptor, run each selected check in isolation, report."""

from __future__ import annotations

import asyncio
import contextlib
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from adaptor_nb.driver import Descriptor

from ._cases import ConformanceCase, default_prompt
from ._checks import CHECKS, CheckFn
from ._clauses import check_for, clause_of
from ._harness import DriverSource, _Harness, _make_driver, _Settings
from ._report import CheckResult, ConformanceReport, Status
from ._verdicts import _Breach, _Skip


async def _read_descriptor(settings: _Settings) -> tuple[str, Descriptor]:
    async with contextlib.AsyncExitStack() as stack:
        case = ConformanceCase(check="descriptor")
        driver = await _make_driver(settings, case, stack)
        desc = driver.descriptor()
        if not isinstance(desc, Descriptor):
            raise TypeError(f"{type(driver).__name__}.descriptor() returned {type(desc).__name__}, not a Descriptor")
        return driver.name, desc


async def _run_check(name: str, fn: CheckFn, desc: Descriptor, settings: _Settings) -> CheckResult:
    t0 = time.monotonic()
    status: Status = "pass"
    reason = ""
    try:
        async with contextlib.AsyncExitStack() as stack:
            h = _Harness(name, desc, settings, stack)
            try:
                async with asyncio.timeout(settings.timeout):
                    reason = await fn(h) or ""
            finally:
                await h.close()
    except _Skip as exc:
        status, reason = "skip", str(exc)
    except _Breach as exc:
        status, reason = "fail", str(exc)
    except TimeoutError:
        status, reason = "fail", f"the check did not finish within {settings.timeout:g} s"
    except Exception as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        status = "fail"
        reason = f"{type(exc).__name__}: {exc} (at {where.filename.rsplit('/', 1)[-1]}:{where.lineno})"
    return CheckResult(name, status, reason, time.monotonic() - t0, clause_of(name).id)


async def run_driver_conformance(
    factory: DriverSource,
    *,
    prompt_for: Callable[[ConformanceCase, int], str] = default_prompt,
    agent_options: Mapping[str, Any] | Callable[[ConformanceCase], Mapping[str, Any]] | None = None,
    checks: Iterable[str] | None = None,
    skip: Mapping[str, str] | Iterable[str] = (),
    timeout: float = 60.0,
    raise_on_failure: bool = True,
) -> ConformanceReport:
    """Run the conformance checks on the driver that ``factory`` makes and return the report.

    ``factory`` returns a fresh Driver (or an awaitable of one, or a context manager yielding one) and may take the
    check's ConformanceCase; ``prompt_for(case, index)`` makes each run's prompt; ``agent_options`` (a mapping or a
    function of the case) is passed to ``Agent(...)``; ``checks`` selects checks by name and ``skip`` skips some
    (a mapping gives the reasons), each by name or by clause id (``"event.1"``); ``timeout`` bounds each check in
    seconds.
    """
    names = list(CHECKS) if checks is None else [check_for(c) for c in checks]
    given = dict(skip) if isinstance(skip, Mapping) else dict.fromkeys(skip, "skipped by the caller")
    skips = {check_for(k): v for k, v in given.items()}
    unknown = sorted({*names, *skips} - set(CHECKS))
    if unknown:
        raise ValueError(f"unknown conformance check(s) {unknown}; known: {sorted(CHECKS)}")
    if not callable(factory):
        raise TypeError("run_driver_conformance() needs a factory that returns a fresh Driver")
    if not (isinstance(timeout, int | float) and timeout > 0):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    settings = _Settings(factory, prompt_for, agent_options, float(timeout))
    driver_name, desc = await _read_descriptor(settings)
    results: list[CheckResult] = []
    for name in names:
        if name in skips:
            results.append(CheckResult(name, "skip", skips[name], clause=clause_of(name).id))
            continue
        results.append(await _run_check(name, CHECKS[name], desc, settings))
    report = ConformanceReport(driver=driver_name, descriptor=desc, results=tuple(results))
    if raise_on_failure:
        report.raise_for_failures()
    return report
