"""CodeBuddy Code stream-json frames as adaptor_nb events and transcript items.

The frames are Claude-like (the door's ``ClaudeLikeTranslator`` reads them); CodeBuddy adds ``file-history-snapshot``
lines, ``system/status`` lines, a ``system/init`` again in mid-turn (not a turn boundary), top-level ``error`` lines
and ``errors_info`` on failed results.
"""

from __future__ import annotations

from typing import Any

from ...driver import ClaudeLikeResult, ClaudeLikeTranslator, Event, TranscriptItem, parse_claude_like_result

TurnResult = ClaudeLikeResult
parse_result = parse_claude_like_result


class FrameTranslator(ClaudeLikeTranslator):
    """CodeBuddy's frames: ``codebuddy.*`` notice codes, its version field, and its own line types."""

    PREFIX = "codebuddy"
    LABEL = "CodeBuddy"
    VERSION_KEY = "version"
    QUIET_FRAMES = ClaudeLikeTranslator.QUIET_FRAMES | {"control_notification"}
    SKIP_EMPTY_STATUS = True

    def unknown(self, frame: dict[str, Any]) -> list[Event]:
        """``file-history-snapshot`` goes to the transcript (the files the CLI backed up); others as in Claude."""
        if frame.get("type") == "file-history-snapshot":
            snap = frame.get("snapshot")
            files = (snap.get("trackedFileBackups") if isinstance(snap, dict) else None) or {}
            self._transcript(TranscriptItem(kind="file_history", data={"files": sorted(files)}))
            return []
        return super().unknown(frame)


__all__ = ["FrameTranslator", "TurnResult", "parse_result"]
