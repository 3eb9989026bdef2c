"""How a check fails (the driver broke the contract) or is skipped (it does not apply)."""

from __future__ import annotations

from typing import NoReturn


class _Breach(AssertionError):
    """The driver broke the contract."""


class _Skip(Exception):
    """The check does not apply to what the driver declares."""


def _fail(message: str) -> NoReturn:
    raise _Breach(message)


def _expect(condition: bool, message: str) -> None:
    if not condition:
        _fail(message)


def _skip(reason: str) -> NoReturn:
    raise _Skip(reason)
