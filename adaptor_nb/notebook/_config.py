"""``%agent config``: the notebook's defaults for how long approvals wait and whether a failed run raises."""

from __future__ import annotations

from dataclasses import dataclass

from ._args import _Parser, approval_seconds
from ._pace import describe_timeout


@dataclass
class NotebookConfig:
    """Defaults for every ``%%agent`` cell of this kernel; a cell's own options win."""

    approval_timeout: float | None = None  # None: no expiry with a front end, a bounded wait headless
    no_raise: bool = False


def config_command(config: NotebookConfig, args: list[str]) -> str:
    """Apply ``%agent config [--approval-timeout S|none|default] [--no-raise | --raise]`` and describe the result."""
    p = _Parser(prog="%agent config", add_help=False, allow_abbrev=False)
    p.add_argument("--approval-timeout")
    raising = p.add_mutually_exclusive_group()
    raising.add_argument("--no-raise", action="store_true")
    raising.add_argument("--raise", dest="raise_", action="store_true")
    ns = p.parse_args(args)
    if ns.approval_timeout is not None:
        if ns.approval_timeout.strip().lower() == "default":
            config.approval_timeout = None
        else:
            try:
                config.approval_timeout = approval_seconds(ns.approval_timeout)
            except Exception as exc:
                p.error(f"argument --approval-timeout: {exc}")
    if ns.no_raise:
        config.no_raise = True
    if ns.raise_:
        config.no_raise = False
    return describe(config)


def describe(config: NotebookConfig) -> str:
    """What ``%agent config`` prints: each default in words."""
    failures = (
        "recorded in the cell's --out variable and its view; Run All goes on (--no-raise)"
        if config.no_raise
        else "raise, so Run All stops and CI notices (the default; %agent config --no-raise changes it)"
    )
    return f"approval timeout: {describe_timeout(config.approval_timeout)}\nfailed runs: {failures}"
