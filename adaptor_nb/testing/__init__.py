"""Public test kit: driver and store conformance suites, fake model servers, replay CLI, CLI locator.

Names load lazily so that importing this package stays cheap (the fake servers pull in HTTP machinery).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..drivers.reference import scenario
    from ._anthropic import FakeAnthropicServer, TextBlock, ThinkingBlock, ToolUseBlock
    from ._anthropic import RecordedRequest as AnthropicRequest
    from ._anthropic import Reply as AnthropicReply
    from ._clis import find_cli
    from ._openai import FakeOpenAIServer, ToolCallSpec, example_for_schema
    from ._openai import RecordedRequest as OpenAIRequest
    from ._openai import Reply as OpenAIReply
    from ._store_conformance import STORE_CHECKS, run_store_conformance
    from .conformance import (
        CHECKS,
        CheckResult,
        ConformanceCase,
        ConformanceReport,
        Hold,
        ModelRun,
        default_prompt,
        run_driver_conformance,
    )

# public name -> (module, attribute)
_LAZY: dict[str, tuple[str, str]] = {
    "run_driver_conformance": (".conformance", "run_driver_conformance"),
    "ConformanceReport": (".conformance", "ConformanceReport"),
    "ConformanceCase": (".conformance", "ConformanceCase"),
    "CheckResult": (".conformance", "CheckResult"),
    "ModelRun": (".conformance", "ModelRun"),
    "Hold": (".conformance", "Hold"),
    "CHECKS": (".conformance", "CHECKS"),
    "default_prompt": (".conformance", "default_prompt"),
    "run_store_conformance": ("._store_conformance", "run_store_conformance"),
    "STORE_CHECKS": ("._store_conformance", "STORE_CHECKS"),
    "FakeAnthropicServer": ("._anthropic", "FakeAnthropicServer"),
    "AnthropicReply": ("._anthropic", "Reply"),
    "AnthropicRequest": ("._anthropic", "RecordedRequest"),
    "TextBlock": ("._anthropic", "TextBlock"),
    "ThinkingBlock": ("._anthropic", "ThinkingBlock"),
    "ToolUseBlock": ("._anthropic", "ToolUseBlock"),
    "FakeOpenAIServer": ("._openai", "FakeOpenAIServer"),
    "OpenAIReply": ("._openai", "Reply"),
    "OpenAIRequest": ("._openai", "RecordedRequest"),
    "ToolCallSpec": ("._openai", "ToolCallSpec"),
    "example_for_schema": ("._openai", "example_for_schema"),
    "find_cli": ("._clis", "find_cli"),
    "scenario": ("..drivers.reference", "scenario"),
}

__all__ = [
    "CHECKS",
    "STORE_CHECKS",
    "AnthropicReply",
    "AnthropicRequest",
    "CheckResult",
    "ConformanceCase",
    "ConformanceReport",
    "FakeAnthropicServer",
    "FakeOpenAIServer",
    "Hold",
    "ModelRun",
    "OpenAIReply",
    "OpenAIRequest",
    "TextBlock",
    "ThinkingBlock",
    "ToolCallSpec",
    "ToolUseBlock",
    "default_prompt",
    "example_for_schema",
    "find_cli",
    "run_driver_conformance",
    "run_store_conformance",
    "scenario",
]


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'adaptor_nb.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(target[0], __name__), target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
