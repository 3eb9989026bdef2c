"""Claude Code stream-json frames as adaptor_nb events and transcript items: the door's Claude-like translator."""

from __future__ import annotations

from ...driver import ClaudeLikeResult, ClaudeLikeTranslator, parse_claude_like_result

TurnResult = ClaudeLikeResult
parse_result = parse_claude_like_result


class FrameTranslator(ClaudeLikeTranslator):
    """Claude Code's frames: the shared translator with its ``claude.*`` notice codes."""


__all__ = ["FrameTranslator", "TurnResult", "parse_result"]
