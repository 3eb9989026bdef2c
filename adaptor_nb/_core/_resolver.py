"""A driver's MessageCapabilityResolver, asked before launch: it may narrow the declared message capabilities for
one run (never widen them), and the run says so in one Notice."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .._enums import Boundary, ContinueMode, NoticeKind
from .._events import Notice
from ..driver._optional import MessageCapabilityResolver
from ..driver._spi import MessageCapabilities


def narrowed(declared: MessageCapabilities, resolved: MessageCapabilities) -> MessageCapabilities:
    """``resolved`` kept within ``declared``: no boundary, interrupt or continuation the driver did not declare."""
    continue_mode = resolved.continue_mode
    if declared.continue_mode is ContinueMode.NONE or (
        continue_mode is ContinueMode.IN_RUN and declared.continue_mode is not ContinueMode.IN_RUN
    ):
        continue_mode = declared.continue_mode
    return replace(
        resolved,
        boundaries=frozenset(b for b in resolved.boundaries if b in declared.boundaries),
        interrupt=resolved.interrupt and declared.interrupt,
        continue_mode=continue_mode,
    )


async def resolve_messages(driver: Any, declared: MessageCapabilities) -> tuple[MessageCapabilities, Notice] | None:
    """The capabilities for this run and their Notice when the driver's resolver narrowed them; else None."""
    if not isinstance(driver, MessageCapabilityResolver):
        return None
    caps = narrowed(declared, await driver.resolve_message_capabilities(declared))
    if caps == declared:
        return None
    lost = sorted(b.value for b in declared.boundaries - caps.boundaries)
    if declared.interrupt and not caps.interrupt:
        lost.append("interrupt")
    notice = Notice(
        kind=NoticeKind.LIFECYCLE.value,
        text=(
            f"the driver narrowed message delivery for this run (no {', '.join(lost) or 'change of boundary'}): "
            + ("input waits for the turn's end" if Boundary.IN_RUN not in caps.boundaries else "see the metadata")
        ),
        metadata={"code": "messages.resolved", "boundaries": ",".join(sorted(b.value for b in caps.boundaries))},
    )
    return caps, notice
