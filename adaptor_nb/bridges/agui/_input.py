"""What the bridge reads from a ``RunAgentInput``: the latest user message, as text."""

from __future__ import annotations

from dataclasses import dataclass

from ag_ui.core import RunAgentInput, UserMessage


@dataclass(frozen=True)
class UserText:
    """The latest user message of an input: its id and its text parts joined."""

    id: str
    text: str


def latest_user_message(input: RunAgentInput) -> UserText | None:
    """The last ``user`` message of ``input`` with any text, or None."""
    for message in reversed(input.messages):
        if isinstance(message, UserMessage):
            content = message.content
            if isinstance(content, str):
                text = content
            else:
                text = "\n".join(part.text for part in content if getattr(part, "type", "") == "text")  # type: ignore[union-attr]
            if text.strip():
                return UserText(message.id, text)
    return None
