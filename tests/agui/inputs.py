"""AG-UI inputs for the bridge tests, built from ag-ui-protocol's own types."""

from __future__ import annotations

from typing import Any

from ag_ui.core import RunAgentInput, UserMessage


def run_input(thread_id: str, *messages: tuple[str, str], run_id: str = "r1", **extra: Any) -> RunAgentInput:
    """An input whose messages are user messages ``(id, text)``."""
    return RunAgentInput(
        thread_id=thread_id,
        run_id=run_id,
        messages=[UserMessage(id=mid, content=text) for mid, text in messages],
        **extra,
    )
