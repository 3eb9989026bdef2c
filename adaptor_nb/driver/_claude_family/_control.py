"""Control requests of a Claude-family CLI: tool approvals, and the host tools' MCP messages it carries."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ._approvals import (
    allow_response,
    approval_spec,
    cancelled_reply,
    decision_response,
    error_response,
    mcp_response,
)
from ._decode import WAKE

if TYPE_CHECKING:
    from .._spi import Invocation, RunContext
    from ._process import ClaudeFamilyProcess
    from ._profile import ClaudeFamilyProfile


class ControlRequests:
    """The control-request half of ``ClaudeFamilyRun``: one task per approval or host-tool call, so the loop
    never waits on either. The first three methods are hooks a driver's own run may override."""

    if TYPE_CHECKING:
        profile: ClaudeFamilyProfile
        proc: ClaudeFamilyProcess
        ctx: RunContext
        inv: Invocation
        withdrawn: set[str]
        approval_tasks: dict[str, asyncio.Task[None]]
        mcp_tasks: dict[str, asyncio.Task[None]]
        user_interrupted: str

    def _plan_for(self, frame: dict[str, Any]) -> tuple[str, str]:
        """The text and path of a plan file to show with an ExitPlanMode request, when the tool carries none."""
        return "", ""

    def _stops_later(self, frame: dict[str, Any], exc: Exception) -> bool:
        """Whether the policy's refusal of ``frame`` ends the run later (the CLI ends its turn by itself)."""
        return False

    def _decided(self, frame: dict[str, Any], action: str) -> None:
        """A decision on ``frame`` was sent to the CLI."""

    def _control_request(self, frame: dict[str, Any]) -> None:
        rid = str(frame.get("request_id") or "")
        request = frame.get("request")
        subtype = request.get("subtype") if isinstance(request, dict) else None
        if subtype == "mcp_message" and isinstance(request, dict) and self._serves(request):
            work = asyncio.get_running_loop().create_task(self._mcp_message(request, rid))
            self.mcp_tasks[rid] = work  # one task per message: parallel calls overlap, the reader never waits
            return
        if subtype != "can_use_tool":
            self.proc.send(error_response(rid, f"adaptor_nb does not serve control requests of type {subtype!r}"))
            return
        if self.profile.asks_for_allowed_tools and self._needs_no_approval(request):
            self.proc.send(allow_response(frame, self.profile))  # a host tool that needs no approval
            return
        task = asyncio.get_running_loop().create_task(self._approve(frame, rid))
        self.approval_tasks[rid] = task

    def _needs_no_approval(self, request: Any) -> bool:
        hosted = self.inv.tools
        if hosted is None or not isinstance(request, dict):
            return False
        own = hosted.own_name(str(request.get("tool_name") or ""))
        return own is not None and own not in hosted.approval

    async def _approve(self, frame: dict[str, Any], rid: str) -> None:
        try:
            decision = await self.ctx.approvals.request(approval_spec(frame, self.profile, *self._plan_for(frame)))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the policy ended the run: stop the CLI's turn and surface the error
            if rid not in self.withdrawn:
                self.proc.send(error_response(rid, "the run was stopped by its approval policy"))
                if self._stops_later(frame, exc):
                    return
                self.proc.interrupt_soon()
            self.proc.inbox.put_nowait((WAKE, self, ("raise", exc)))
            return
        finally:
            self.approval_tasks.pop(rid, None)
        if rid in self.withdrawn or decision.by == "withdrawn":
            return
        self.proc.send(decision_response(frame, decision, self.profile))
        self._decided(frame, decision.action)
        if decision.action == "deny" and decision.interrupt:
            self.user_interrupted = decision.reason or "denied with interrupt"

    def _serves(self, request: dict[str, Any]) -> bool:
        hosted = self.inv.tools
        return hosted is not None and hosted.serve is not None and request.get("server_name") == hosted.server

    async def _mcp_message(self, request: dict[str, Any], rid: str) -> None:
        """Answer one of the host tools' MCP messages (the CLI carries them for the SDK server it was given)."""
        hosted = self.inv.tools
        assert hosted is not None and hosted.serve is not None
        raw = request.get("message")
        message: dict[str, Any] = raw if isinstance(raw, dict) else {}
        try:
            reply = await hosted.serve(message)
        except asyncio.CancelledError:
            # The run is over: answer the call anyway, so the interrupted CLI can finish its turn and stay parked.
            if message.get("id") is not None:
                self.proc.send(mcp_response(rid, cancelled_reply(message["id"])))
            raise
        except Exception as exc:  # the protocol layer failed: the CLI sees an error, the run goes on
            self.proc.send(error_response(rid, f"host tools failed: {type(exc).__name__}"))
            return
        finally:
            self.mcp_tasks.pop(rid, None)
        self.proc.send(mcp_response(rid, reply if reply is not None else {"jsonrpc": "2.0", "result": {}}))
