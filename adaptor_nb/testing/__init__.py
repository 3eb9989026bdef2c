"""Public test kit: driver and store conformance suites, fake model servers, replay CLI, CLI locator.

Names load lazily so that importing this package stays cheap (the fake servers pull in HTTP machinery).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._naming import lazy_exports

# public name -> defining module ("module:attribute" where the public name differs)
_PUBLIC: dict[str, str] = {
    "AnthropicReply": "._anthropic:Reply",
    "AnthropicRequest": "._anthropic:RecordedRequest",
    "CHECKS": ".conformance",
    "CLAUSES": ".conformance",
    "Clause": ".conformance",
    "FAMILIES": ".conformance",
    "parse_conformance_table": ".conformance:parse_table",
    "render_conformance_table": ".conformance:render_table",
    "conformance_verdicts": ".conformance:verdicts",
    "HOST_TOOL_PREFIX": ".conformance",
    "ChatReply": "._chat_completions",
    "ChatRequest": "._chat_completions",
    "ChatToolCall": "._chat_completions",
    "CheckResult": ".conformance",
    "ConformanceCase": ".conformance",
    "ConformanceReport": ".conformance",
    "FakeAnthropicServer": "._anthropic",
    "FakeChatCompletionsServer": "._chat_completions",
    "FakeOpenAIServer": "._openai",
    "Hold": ".conformance",
    "ModelRun": ".conformance",
    "OpenAIReply": "._openai:Reply",
    "OpenAIRequest": "._openai:RecordedRequest",
    "STORE_CHECKS": "._store_conformance",
    "TextBlock": "._anthropic",
    "ThinkingBlock": "._anthropic",
    "ToolCallSpec": "._openai",
    "ToolUseBlock": "._anthropic",
    "cursor_replay_command": "._cursor_replay",
    "default_prompt": ".conformance",
    "example_for_schema": "._openai",
    "find_cli": "._clis",
    "run_driver_conformance": ".conformance",
    "run_store_conformance": "._store_conformance",
    "scenario": "..drivers.reference",
}

if TYPE_CHECKING:
    from ..drivers.reference import scenario as scenario
    from ._anthropic import FakeAnthropicServer as FakeAnthropicServer
    from ._anthropic import RecordedRequest as AnthropicRequest  # noqa: F401  (re-exported under this name by _PUBLIC)
    from ._anthropic import Reply as AnthropicReply  # noqa: F401  (re-exported under this name by _PUBLIC)
    from ._anthropic import TextBlock as TextBlock
    from ._anthropic import ThinkingBlock as ThinkingBlock
    from ._anthropic import ToolUseBlock as ToolUseBlock
    from ._chat_completions import ChatReply as ChatReply
    from ._chat_completions import ChatRequest as ChatRequest
    from ._chat_completions import ChatToolCall as ChatToolCall
    from ._chat_completions import FakeChatCompletionsServer as FakeChatCompletionsServer
    from ._clis import find_cli as find_cli
    from ._cursor_replay import cursor_replay_command as cursor_replay_command
    from ._openai import FakeOpenAIServer as FakeOpenAIServer
    from ._openai import RecordedRequest as OpenAIRequest  # noqa: F401  (re-exported under this name by _PUBLIC)
    from ._openai import Reply as OpenAIReply  # noqa: F401  (re-exported under this name by _PUBLIC)
    from ._openai import ToolCallSpec as ToolCallSpec
    from ._openai import example_for_schema as example_for_schema
    from ._store_conformance import STORE_CHECKS as STORE_CHECKS
    from ._store_conformance import run_store_conformance as run_store_conformance
    from .conformance import CHECKS as CHECKS
    from .conformance import CLAUSES as CLAUSES
    from .conformance import FAMILIES as FAMILIES
    from .conformance import HOST_TOOL_PREFIX as HOST_TOOL_PREFIX
    from .conformance import CheckResult as CheckResult
    from .conformance import Clause as Clause
    from .conformance import ConformanceCase as ConformanceCase
    from .conformance import ConformanceReport as ConformanceReport
    from .conformance import Hold as Hold
    from .conformance import ModelRun as ModelRun
    from .conformance import default_prompt as default_prompt
    from .conformance import parse_table as parse_conformance_table  # noqa: F401  (re-exported by _PUBLIC)
    from .conformance import render_table as render_conformance_table  # noqa: F401  (re-exported by _PUBLIC)
    from .conformance import run_driver_conformance as run_driver_conformance
    from .conformance import verdicts as conformance_verdicts  # noqa: F401  (re-exported by _PUBLIC)

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), _PUBLIC)
