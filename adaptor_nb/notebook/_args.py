"""Parsing of the ``%%agent`` / ``%agent`` option lines (``{name}`` interpolation is in the view kit)."""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass
from typing import NoReturn

from .._views._interpolate import OptionError as OptionError  # the error option lines and templates raise
from ._attach import Attachment, parse_attachment
from ._help import ACP_NAMES, DRIVER_NAMES
from ._tools import ToolsError, tool_names

APPROVAL_MODES = ("ask", "auto", "deny")


@dataclass(frozen=True)
class CellOptions:
    """The parsed option line of an ``%%agent`` cell."""

    thread: str | None = None
    agent: str | None = None
    driver: str | None = None
    model: str | None = None
    schema: str | None = None
    out: str = "_agent"
    approvals: str | None = None
    timeout: float | None = None
    spawn: bool = False
    instructions: str | None = None
    quiet: bool = False
    skills: tuple[str, ...] = ()
    map: str | None = None
    concurrency: int | None = None
    worktree: bool = False
    tools: tuple[str, ...] = ()
    approval_timeout: float | None = None  # seconds; NO_EXPIRY (negative) waits for ever
    no_raise: bool = False
    attach: tuple[Attachment, ...] = ()


@dataclass(frozen=True)
class UseOptions:
    """The parsed arguments of ``%agent use``."""

    driver: str
    model: str | None = None
    approvals: str | None = None
    timeout: float | None = None
    instructions: str | None = None
    force: bool = False


class _Parser(argparse.ArgumentParser):
    """An argparse parser that raises OptionError instead of exiting the kernel."""

    def error(self, message: str) -> NoReturn:
        raise OptionError(f"{self.prog}: {message}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise OptionError(message or f"{self.prog}: invalid options")


def _positive_seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {value!r}") from None
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {value!r}")
    return seconds


NO_EXPIRY = -1.0
"""The approval timeout that means "wait for the person, however long" (``--approval-timeout none``)."""


def approval_seconds(value: str) -> float:
    """Parse ``--approval-timeout``: a positive number of seconds, or ``none`` for no expiry."""
    if value.strip().lower() in ("none", "never", "off"):
        return NO_EXPIRY
    try:
        return _positive_seconds(value)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds or none, got {value!r}") from None


def _cell_parser() -> _Parser:
    p = _Parser(prog="%%agent", add_help=False, allow_abbrev=False)
    p.add_argument("--thread")
    p.add_argument("--agent")
    p.add_argument("--driver")  # a name, or a comma-separated list to compare side by side (checked below)
    p.add_argument("--model")
    p.add_argument("--schema")
    p.add_argument("--out", default="_agent")
    p.add_argument("--approvals", choices=APPROVAL_MODES)
    p.add_argument("--timeout", type=_positive_seconds)
    p.add_argument("--spawn", action="store_true")
    p.add_argument("--instructions")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--skill", action="append", default=[])  # a skill key or path, repeatable
    p.add_argument("--map")
    p.add_argument("--concurrency", type=_positive_int)
    p.add_argument("--worktree", action="store_true")
    p.add_argument("--tools")
    p.add_argument("--approval-timeout", type=approval_seconds)
    p.add_argument("--no-raise", action="store_true")
    p.add_argument("--attach", action="append", default=[])  # a figure or a DataFrame, repeatable
    return p


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value!r}")
    return number


def _split(line: str, prog: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise OptionError(f"{prog}: cannot split the option line ({exc}); check the quotes") from None


def parse_cell_line(line: str) -> CellOptions:
    """Parse the text after ``%%agent`` into CellOptions; raises OptionError naming the bad option."""
    ns = _cell_parser().parse_args(_split(line, "%%agent"))
    if ns.driver is not None:
        _check_drivers(ns.driver)
    if ns.thread is not None and not ns.thread.strip():
        raise OptionError("%%agent: --thread needs a non-empty key")
    if ns.agent is not None and ns.driver is not None:
        raise OptionError("%%agent: --agent and --driver cannot be used together (the Agent already has a driver)")
    if not ns.out.isidentifier():
        raise OptionError(f"%%agent: --out must be a Python variable name, got {ns.out!r}")
    if ns.agent is not None and not all(a.isidentifier() for a in ns.agent.split(",")):
        raise OptionError(f"%%agent: --agent must name a variable that holds an Agent, got {ns.agent!r}")
    if ns.map is None and ns.concurrency is not None:
        raise OptionError("%%agent: --concurrency only applies with --map DF")
    if ns.map is not None and not ns.map.isidentifier():
        raise OptionError(f"%%agent: --map must name a variable that holds a DataFrame, got {ns.map!r}")
    if ns.map is not None and "," in f"{ns.driver or ''}{ns.agent or ''}":
        raise OptionError("%%agent: --map runs one driver; compare drivers side by side without --map")
    if ns.map is not None and ns.attach:
        raise OptionError("%%agent: --attach cannot be used with --map (attach to a single run)")
    if ns.attach and "," in f"{ns.driver or ''}{ns.agent or ''}":
        raise OptionError("%%agent: --attach sends to one run; it cannot be used with several drivers side by side")
    if ns.map is not None and ns.spawn:
        raise OptionError("%%agent: --spawn cannot be used with --map (each row is its own run already)")
    return CellOptions(
        thread=ns.thread,
        agent=ns.agent,
        driver=ns.driver,
        model=ns.model,
        schema=ns.schema,
        out=ns.out,
        approvals=ns.approvals,
        timeout=ns.timeout,
        spawn=ns.spawn,
        instructions=ns.instructions,
        quiet=ns.quiet,
        skills=tuple(ns.skill),
        map=ns.map,
        concurrency=ns.concurrency,
        worktree=ns.worktree,
        tools=_tools(ns.tools, ns.agent),
        approval_timeout=ns.approval_timeout,
        no_raise=ns.no_raise,
        attach=tuple(parse_attachment(v) for v in ns.attach),
    )


def _check_drivers(value: str) -> None:
    """``--driver NAME`` or ``--driver A,B,...`` (each a known driver, no repeats; a list runs side by side)."""
    names = value.split(",")
    known = (*DRIVER_NAMES, *ACP_NAMES)
    for name in names:
        if name not in known:
            listed = ", ".join(repr(k) for k in known)
            raise OptionError(f"%%agent: argument --driver: invalid choice: {name!r} (choose from {listed})")
    if len(set(names)) != len(names):
        raise OptionError(f"%%agent: --driver {value}: each driver can be named once")


def compared(opts: CellOptions) -> tuple[str, ...]:
    """The drivers or Agents a cell compares side by side (``--driver A,B`` / ``--agent A,B``), or () for one."""
    for value in (opts.driver, opts.agent):
        if value and "," in value:
            return tuple(value.split(","))
    return ()


def _tools(value: str | None, agent: str | None) -> tuple[str, ...]:
    try:
        return tool_names(value, agent)
    except ToolsError as exc:
        raise OptionError(str(exc)) from None


def parse_use(args: list[str]) -> UseOptions:
    """Parse the words after ``%agent use``."""
    p = _Parser(prog="%agent use", add_help=False, allow_abbrev=False)
    p.add_argument("driver", choices=(*DRIVER_NAMES, *ACP_NAMES, "default"))
    p.add_argument("--model")
    p.add_argument("--approvals", choices=APPROVAL_MODES)
    p.add_argument("--timeout", type=_positive_seconds)
    p.add_argument("--instructions")
    p.add_argument("--force", action="store_true")
    ns = p.parse_args(args)
    return UseOptions(ns.driver, ns.model, ns.approvals, ns.timeout, ns.instructions, ns.force)


def split_line(line: str) -> list[str]:
    """Split a line-magic argument string like a shell would."""
    return _split(line, "%agent")
