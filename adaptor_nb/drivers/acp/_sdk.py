"""The ``agent-client-protocol`` SDK, imported on first use with a clear error when the ``acp`` extra is missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from ...driver import InvalidDriverConfigError

MISSING = (
    "the ACP driver needs the Agent Client Protocol SDK: pip install 'adaptor_nb[acp]' "
    "(it installs agent-client-protocol)"
)


def sdk() -> ModuleType:
    """The SDK's top-level module ``acp``; InvalidDriverConfigError naming the extra when it is not installed."""
    try:
        return importlib.import_module("acp")
    except ImportError:
        raise InvalidDriverConfigError(MISSING, option="acp") from None


__all__ = ["MISSING", "sdk"]
