"""The one hook record/replay needs at the process boundary: it may wrap a driver's run and rewrite a spawn.

Nothing here knows about cassettes. With no tap installed every function is a pass-through. A tap installed
with ``install()`` sees each run (``run_driver``) and each CLI process start (``spawn_args``): it can swap the
argv for a recorder that tees the CLI's pipes, or answer with a stand-in that plays recorded frames back inside
this process (``_standin``), so the real driver code runs in both cases. A package that can start a tap from the
environment registers its starter with ``on_first_use()`` when it is imported (``adaptor_nb.cassette`` does, for
``$ADAPTOR_NB_CASSETTE``); the starters run the first time a tap is asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ._spi import Driver, DriverOutcome, Invocation, RunContext
    from ._standin import StandIn


class Tap(Protocol):
    """What an installed tap implements."""

    async def run(self, driver: Driver, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        """Run ``driver.run(invocation, ctx)``, around which the tap keeps its own bookkeeping."""
        ...

    def spawn(self, argv: list[str], cwd: str | None, env: Mapping[str, str] | None) -> list[str] | StandIn:
        """The argv to start instead of ``argv`` (``argv`` itself to leave the start alone), or a stand-in that
        plays the process in-process (no OS process is started then)."""
        ...

    def replaying(self) -> bool:
        """True while the current run plays a recording back (no CLI needs to be installed)."""
        ...


_installed: list[Tap] = []
_starters: list[Callable[[], object]] = []
_started = False


def install(tap: Tap) -> None:
    """Make ``tap`` the active tap (replacing any other)."""
    _installed[:] = [tap]


def uninstall(tap: Tap) -> None:
    """Remove ``tap`` if it is the active one."""
    if _installed and _installed[0] is tap:
        _installed.clear()


def on_first_use(start: Callable[[], object]) -> None:
    """Run ``start`` the first time a tap is asked for, unless one is installed by then: how a tap package starts
    one its environment names (``start`` calls ``install()`` when it does)."""
    if start not in _starters:
        _starters.append(start)


def active() -> Tap | None:
    """The installed tap, after running the registered starters the first time it is asked."""
    global _started
    if not _installed and not _started:
        _started = True
        for start in list(_starters):
            start()
    return _installed[0] if _installed else None


async def run_driver(
    driver: Driver, invocation: Invocation, ctx: RunContext, *, scripted: bool = False
) -> DriverOutcome:
    """``driver.run(invocation, ctx)``, through the active tap when there is one. A ``scripted`` driver (its
    descriptor says so: the offline demo driver) is deterministic already: its runs never go through a tap."""
    tap = active()
    if tap is None or scripted:
        return await driver.run(invocation, ctx)
    return await tap.run(driver, invocation, ctx)


def spawn_args(argv: list[str], cwd: str | None, env: Mapping[str, str] | None) -> list[str] | StandIn:
    """The argv ``CLIProcess.start`` really starts for ``argv``, or the stand-in it plays instead."""
    tap = active()
    return argv if tap is None else tap.spawn(argv, cwd, env)


def replaying() -> bool:
    """True while the current run replays a recording (drivers then need no installed CLI)."""
    tap = active()
    return tap is not None and tap.replaying()
