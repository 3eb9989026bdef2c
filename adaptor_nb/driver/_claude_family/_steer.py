"""Which messages a run can take now, and ``steer``: messages sent into a running turn by a control request.

Steered messages count as delivered once a model response starts after the CLI acknowledged them (the CLI adds
steered text to the turn's next model request); a refusal, or a turn that ends first, sends them back to the queue.
A profile without ``steers`` writes in-run messages as a user line while a tool runs instead (the CLI merges it
after the tool).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..._enums import Boundary, NoticeKind
from ..._events import Notice
from .._spi import ClaimedMessage
from ._decode import WAKE

if TYPE_CHECKING:
    from .._claude_stream import ClaudeLikeTranslator
    from .._spi import RunContext
    from ._process import ClaudeFamilyProcess
    from ._profile import ClaudeFamilyProfile


@dataclass
class Pending:
    """A user line written to stdin and not yet echoed back (or messages steered in, until a model request)."""

    claimed: list[ClaimedMessage] = field(default_factory=list)
    boundary: Boundary = Boundary.IN_RUN
    mechanism: str = "stdin"


@dataclass
class Steer:
    """Messages sent with one ``steer`` control request, and the model responses seen when it was acknowledged."""

    claimed: list[ClaimedMessage]
    task: asyncio.Task[dict[str, Any]]
    acked_at: int | None = None


class Steering:
    """The message-delivery half of ``ClaudeFamilyRun``: the boundaries to watch, and the steers in flight."""

    profile: ClaudeFamilyProfile
    proc: ClaudeFamilyProcess
    ctx: RunContext
    tr: ClaudeLikeTranslator
    turn_active: bool
    session_id: str
    interrupting: bool
    steers: list[Steer]
    steer_refused: bool
    model_responses: int
    _last_message_id: str
    _saw_message_start: bool

    if TYPE_CHECKING:

        def _rewatch(self) -> None: ...
        def _delivered(self, p: Pending) -> None: ...

    def init_steering(self) -> None:
        self.steers = []
        self.steer_refused = False  # the CLI said the turn is finishing ("idle"): SOON waits for its end
        self.model_responses = 0  # model responses started in this run (message_start or a new assistant message)
        self._last_message_id = ""
        self._saw_message_start = False

    def deliverable(self) -> frozenset[Boundary]:
        """The boundaries at which a message can be delivered now.

        While a turn runs, INTERRUPT messages go in through the ``interrupt`` control request; SOON ones through
        ``steer`` (a steering profile: any time in a turn the CLI did not refuse) or as a user line while a tool
        runs. Between turns they wait for the turn's end, where the next user line takes them.
        """
        if not self.turn_active:
            return frozenset()
        if self.profile.steers:
            if not self.session_id:
                return frozenset()
            wanted = {Boundary.IN_RUN, Boundary.INTERRUPT}
            if self.interrupting:
                wanted -= {Boundary.INTERRUPT, Boundary.IN_RUN}
            if self.steer_refused:
                wanted.discard(Boundary.IN_RUN)
            return frozenset(wanted)
        wanted = set()
        if not self.interrupting:
            wanted.add(Boundary.INTERRUPT)
        if self.tr.open_tools:
            wanted.add(Boundary.IN_RUN)
        return frozenset(wanted)

    def steerable(self) -> bool:
        return bool(self.turn_active and self.session_id and not (self.interrupting or self.steer_refused))

    def steer(self, claimed: list[ClaimedMessage]) -> None:
        """Send ``claimed`` into the running turn; the acknowledgement comes back through the inbox, in order."""
        request = {
            "subtype": "steer",
            "session_id": self.session_id,
            "content_blocks": [{"type": "text", "text": "\n\n".join(m.text for m in claimed)}],
        }
        task = asyncio.get_running_loop().create_task(self.proc.control(request))
        steer = Steer(claimed, task)
        self.steers.append(steer)

        def acked(_: asyncio.Task[dict[str, Any]]) -> None:
            self.proc.inbox.put_nowait((WAKE, self, ("steered", steer)))

        task.add_done_callback(acked)

    async def steer_answered(self, steer: Steer) -> None:
        """The CLI answered a steer: a refusal sends the messages back to the queue (turn end takes them)."""
        if steer not in self.steers:
            return
        task = steer.task
        ok = not task.cancelled() and task.exception() is None and task.result().get("steered") is True
        if ok:
            steer.acked_at = self.model_responses
            await self.ctx.emit(
                Notice(
                    kind=NoticeKind.LIFECYCLE.value,
                    text=f"{self.profile.label} took {len(steer.claimed)} message(s) into the running turn (steer)",
                    metadata={
                        "code": f"{self.profile.name}.steered",
                        "message_ids": ",".join(m.id for m in steer.claimed),
                    },
                )
            )
            return
        self.steers.remove(steer)
        self.steer_refused = True  # no second try in this turn: the CLI would refuse again until the result
        self.requeue(steer.claimed)
        self._rewatch()

    def requeue(self, claimed: list[ClaimedMessage]) -> None:
        msgs = self.ctx.messages
        if msgs is None:
            return
        for m in claimed:
            with contextlib.suppress(RuntimeError):
                msgs.requeue(m)

    def model_response_started(self, from_assistant: bool = False) -> None:
        """A model request of this turn began: steered messages acknowledged before it are in it."""
        self.model_responses += 1
        self._saw_message_start = self._saw_message_start or not from_assistant
        for steer in [s for s in self.steers if s.acked_at is not None and s.acked_at < self.model_responses]:
            self.steers.remove(steer)
            self._delivered(Pending(steer.claimed, Boundary.IN_RUN, "steer"))

    def note_assistant(self, frame: dict[str, Any]) -> None:
        """Without partial messages an assistant line with a new message id is the sign of a new model response."""
        if not self.profile.steers or self._saw_message_start:
            return
        message = frame.get("message")
        mid = str(message.get("id") or "") if isinstance(message, dict) else ""
        if mid and mid != self._last_message_id:
            self._last_message_id = mid
            self.model_response_started(from_assistant=True)

    async def settle_steers(self) -> None:
        """At a turn's end: wait for unanswered steers; those that reached no model request go back to the queue."""
        if not self.steers:
            return
        for steer in list(self.steers):
            if not steer.task.done():
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(asyncio.shield(steer.task), 5.0)
        leftover, self.steers = self.steers, []
        for steer in leftover:
            if not steer.task.done():
                steer.task.cancel()
            self.requeue(steer.claimed)

    def steer_tasks(self) -> list[asyncio.Task[dict[str, Any]]]:
        return [s.task for s in self.steers]

    def drop_steers(self) -> list[ClaimedMessage]:
        """Forget the steers in flight; their messages, for the caller to settle."""
        dropped, self.steers = self.steers, []
        return [m for s in dropped for m in s.claimed]
