"""Public test kit: driver and store conformance suites, fake model servers, replay CLI, CLI locator.

Names load lazily so that importing this package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, str] = {
    "run_driver_conformance": "._conformance",
    "ConformanceReport": "._conformance",
    "run_store_conformance": "._store_conformance",
    "FakeAnthropicServer": "._anthropic",
    "FakeOpenAIServer": "._openai",
    "find_cli": "._clis",
    "scenario": "..drivers.reference",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'adaptor_nb.testing' has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
