"""Prompt templates: ``{name}`` / ``{name.attr}`` fields filled from a namespace (a cell's, or a row's columns)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


class OptionError(ValueError):
    """An option line or a prompt template could not be used; the message names what is wrong."""


_FIELD = re.compile(r"\{\{|\}\}|\{([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\}")


def interpolate(text: str, namespace: Mapping[str, Any]) -> str:
    """Replace ``{name}`` / ``{name.attr}`` with values from ``namespace``; unknown names stay as written."""

    def sub(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        head, *attrs = match.group(1).split(".")
        if head not in namespace:
            return token
        value = namespace[head]
        for attr in attrs:
            try:
                value = getattr(value, attr)
            except AttributeError:
                raise OptionError(f"%%agent: cannot interpolate {token}: {head!r} has no attribute {attr!r}") from None
        return str(value)

    return _FIELD.sub(sub, text)
