"""One run on an agent process: open or load the session, send ``session/prompt``, publish the updates, answer
permission requests through the core, cancel with ``session/cancel``."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable, Mapping
from typing import Any

from ...driver import (
    Boundary,
    ClaimedMessage,
    Decision,
    DriverFailure,
    DriverOutcome,
    HostedTools,
    ImageInput,
    Invocation,
    MessageFailure,
    Notice,
    NoticeKind,
    ProcessInfo,
    ProcessKind,
    ResumeRejectedError,
    RunContext,
    TranscriptItem,
    Usage,
)
from ._approvals import answer, approval_spec
from ._mcp import declarations
from ._process import AgentProcess, Inbound, wire
from ._sdk import sdk
from ._translate import Translator, host_tool_name, wire_usage

AUTH_REQUIRED = -32000
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
INTERRUPTS = frozenset({Boundary.INTERRUPT})


async def open_session(
    agent: AgentProcess,
    inv: Invocation,
    cwd: str,
    timeout: float,
    mode: str,
    env: Mapping[str, str],
    credential: str = "",
) -> None:
    """``session/new`` (or ``session/load`` for a resume) with the workspace as cwd and the Agent's MCP servers
    (``env``: the agent's environment, for their bearer tokens); then the configured mode. ``credential`` says
    where the agent's credential goes, for the error of an agent that needs authentication."""
    if agent.session_id:
        return
    name = agent.proc.argv[0]
    servers = declarations(inv, agent.init, env, name)
    try:
        if inv.resume is not None:
            if not agent.can_load:
                raise ResumeRejectedError(
                    f"the ACP agent {name!r} does not advertise loadSession, so session {inv.resume.session_id} "
                    "cannot be resumed in a new process",
                    key=inv.thread_key,
                    details={"session_id": inv.resume.session_id},
                )
            result = await asyncio.wait_for(
                agent.conn.load_session(cwd=cwd, session_id=inv.resume.session_id, mcp_servers=servers), timeout
            )
            agent.session_id = inv.resume.session_id
        else:
            result = await asyncio.wait_for(agent.conn.new_session(cwd=cwd, mcp_servers=servers), timeout)
            agent.session_id = str(result.session_id)
        agent.session = wire(result) if result is not None else {}
        if mode:
            await asyncio.wait_for(agent.conn.set_session_mode(session_id=agent.session_id, mode_id=mode), timeout)
    except TimeoutError:
        raise DriverFailure(
            f"the ACP agent {name!r} did not open a session within {timeout:g} s (Config.startup_timeout)",
            details={"stderr_tail": agent.proc.stderr_tail()},
            retryable=True,
        ) from None
    except ResumeRejectedError:
        raise
    except Exception as exc:
        code = getattr(exc, "code", None)
        if code == AUTH_REQUIRED:
            methods = ", ".join(agent.auth_methods) or "none advertised"
            raise DriverFailure(
                f"the ACP agent {name!r} needs authentication first (its auth methods: {methods}); give it its "
                f"credential ({credential or 'see acp.preset(...).auth'}) and run again",
                details={"auth_methods": agent.init.get("authMethods"), "stderr_tail": agent.proc.stderr_tail()},
            ) from None
        if inv.resume is not None:
            raise ResumeRejectedError(
                f"the ACP agent {name!r} refused to load session {inv.resume.session_id}: {exc}",
                key=inv.thread_key,
                details={"session_id": inv.resume.session_id},
            ) from None
        raise DriverFailure(
            f"the ACP agent {name!r} refused session/new: {exc}", details={"stderr_tail": agent.proc.stderr_tail()}
        ) from None


def _describe(exc: BaseException, stderr: str) -> str:
    """A JSON-RPC error with the details the agent put in its ``data``, else the last error line of its stderr
    (codex-acp says there what went wrong: a missing key variable, an unreachable endpoint)."""
    data = getattr(exc, "data", None)
    details = data.get("details") if isinstance(data, dict) else data
    if details:
        return f"{exc} ({details})"
    lines = [line.strip() for line in _ANSI.sub("", stderr).splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    last = (errors or lines or [""])[-1][-400:]
    return f"{exc} (stderr: {last})" if last else str(exc)


def _model_option(agent: AgentProcess) -> dict[str, Any]:
    for option in agent.session.get("configOptions") or []:
        if isinstance(option, dict) and option.get("id") == "model":
            return option
    return {}


def current_model(agent: AgentProcess) -> str:
    """The name of the session's model as its ``model`` config option says ("" when it has none)."""
    option = _model_option(agent)
    current = option.get("currentValue")
    for choice in option.get("options") or []:
        if isinstance(choice, dict) and choice.get("value") == current:
            return str(choice.get("name") or current)
    return str(current or "")


async def select_model(agent: AgentProcess, model: str, timeout: float) -> None:
    """Switch the session to ``model`` through its ``model`` config option (matched by value or name).

    An agent without that option, or without that model, fails the run naming what it offers."""
    if not model or model == agent.model:
        return
    option = _model_option(agent)
    choices = [c for c in option.get("options") or [] if isinstance(c, dict)]
    value = next((str(c["value"]) for c in choices if model in (c.get("value"), c.get("name"))), "")
    if not value:
        offered = ", ".join(str(c.get("name") or c.get("value")) for c in choices) or "no model choice"
        raise DriverFailure(
            f"the ACP agent {agent.proc.argv[0]!r} cannot switch to model {model!r} (it offers: {offered})",
            details={"model": model},
        )
    try:
        await asyncio.wait_for(
            agent.conn.set_config_option(config_id="model", session_id=agent.session_id, value=value), timeout
        )
    except Exception as exc:
        raise DriverFailure(
            f"the ACP agent {agent.proc.argv[0]!r} refused model {model!r}: {type(exc).__name__}: {exc}",
            details={"model": model, "stderr_tail": agent.proc.stderr_tail()},
        ) from None
    agent.model = model


class Turn:
    """One run's prompts on ``agent``: events out, approvals through the core, a DriverOutcome back.

    ACP has no way to interrupt a prompt with new input, so an INTERRUPT message is delivered as ``session/cancel``
    followed by a new ``session/prompt`` carrying the message; ``idle_timeout`` bounds the silence of the agent
    between two messages of a prompt (never while a permission request waits for its decision)."""

    def __init__(
        self,
        agent: AgentProcess,
        ctx: RunContext,
        provider: str,
        model: str,
        grace: float,
        idle_timeout: float | None = None,
        hosted: HostedTools | None = None,
    ) -> None:
        self.agent = agent
        self.hosted = hosted
        self.ctx = ctx
        self.provider = provider
        self.model = model
        self.grace = grace
        self.idle_timeout = idle_timeout
        self.inbound: asyncio.Queue[Inbound] = asyncio.Queue()
        self.translator = Translator(agent.session_id, model, hosted)
        self.pending: list[Inbound] = []
        self.finished = False
        self.usage: Usage | None = None
        self.interrupting: list[ClaimedMessage] = []
        self._unwatch: Callable[[], None] | None = None
        self.cancel_sent = False

    async def execute(self, text: str, images: tuple[ImageInput, ...] = ()) -> DriverOutcome:
        agent = self.agent
        agent.attach(self.ctx, self.inbound)
        acp = sdk()
        # Images first, then the text, as the other drivers send them; only agents advertising
        # promptCapabilities.image get any (see Driver.run).
        blocks: list[Any] = [*(acp.image_block(i.base64(), i.media_type) for i in images), acp.text_block(text)]
        batch: list[ClaimedMessage] = []
        try:
            while True:
                try:
                    response = await self._prompt(blocks)
                except BaseException:
                    self._settle(batch, None)
                    raise
                self._settle(batch, response)
                if response.get("stopReason") == "refusal":
                    self._refusal(response)
                batch = await self._turn_end(response)
                if not batch:
                    break
                blocks = [sdk().text_block("\n\n".join(m.text for m in batch))]
        finally:
            self._watch(False)
        self.finished = True
        return self._outcome(response)

    def _refusal(self, response: dict[str, Any]) -> None:
        """A prompt the agent ended with ``refusal`` (it refuses to go on; CodeBuddy also says so for a failed
        model request, with the error in ``_meta``) fails the run, keeping the partial text."""
        meta = response.get("_meta")
        errors = [str(v) for k, v in meta.items() if k.endswith("errorMessage")] if isinstance(meta, dict) else []
        why = f": {errors[0][:500]}" if errors else ""
        raise DriverFailure(
            f"the ACP agent {self.agent.proc.argv[0]!r} refused to go on (stopReason refusal){why}",
            details={
                "stop_reason": "refusal",
                "partial_text": self.translator.record.text,
                "stderr_tail": self.agent.proc.stderr_tail(),
            },
            session_id=self.agent.session_id,
        )

    def _settle(self, batch: list[ClaimedMessage], response: dict[str, Any] | None) -> None:
        """Acknowledge the messages a prompt carried: delivered, or failed when the agent ended the prompt as
        cancelled without this run cancelling it and before it produced anything (CodeBuddy does so with every
        prompt until the model request of the cancelled one has ended), or requeued when the prompt failed."""
        port = self.ctx.messages
        if port is None:
            return
        record = self.translator.record
        void = (
            response is not None
            and response.get("stopReason") == "cancelled"
            and not self.cancel_sent
            and not (record.parts or record.tools)
        )
        for m in batch:
            if response is None:
                port.requeue(m, possible_duplicate=True)
            elif void:
                port.failed(m, MessageFailure.PROVIDER_REJECTED)
            else:
                port.delivered(m, boundary=Boundary.INTERRUPT, mechanism="session/cancel")

    def _watch(self, on: bool) -> None:
        """Wake the run when an INTERRUPT message becomes claimable (once per call with ``on``)."""
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None
        port = self.ctx.messages
        if on and port is not None:
            self._unwatch = port.watch(INTERRUPTS, lambda: self.inbound.put_nowait(Inbound("interrupt")))

    async def _prompt(self, blocks: list[Any]) -> dict[str, Any]:
        """One ``session/prompt``: publish its updates and answer its permission requests until it ends."""
        agent, ctx = self.agent, self.ctx
        self.translator.new_turn()
        self.cancel_sent = False
        prompt = asyncio.ensure_future(agent.conn.prompt(session_id=agent.session_id, prompt=blocks))
        prompt.add_done_callback(lambda _: self.inbound.put_nowait(Inbound("done")))
        self._watch(True)
        try:
            while True:
                item = await self._next()
                if item.kind == "done":
                    break
                if item.kind == "update":
                    await ctx.emit_many(self.translator.events(item.params))
                elif item.kind == "permission":
                    await self._permission(item)
                elif item.kind == "interrupt":
                    await self._interrupt()
                elif item.kind == "garbage":
                    await self._garbage(item.params["line"])
                elif item.kind == "declined":
                    await self._declined(item.params)
        except BaseException:
            await self._cancel(prompt)
            raise
        exc = prompt.exception()
        if exc is not None:
            await self._failed(exc)
        response: dict[str, Any] = wire(prompt.result())
        return response

    async def _next(self) -> Inbound:
        if self.idle_timeout is None:
            return await self.inbound.get()
        try:
            return await asyncio.wait_for(self.inbound.get(), self.idle_timeout)
        except TimeoutError:
            raise DriverFailure(
                f"the ACP agent {self.agent.proc.argv[0]!r} sent nothing for {self.idle_timeout:g} s "
                "(Config.idle_timeout)",
                details={"stderr_tail": self.agent.proc.stderr_tail(), "partial_text": self.translator.record.text},
                session_id=self.agent.session_id,
                retryable=True,
            ) from None

    async def _garbage(self, line: str) -> None:
        await self.ctx.emit(ProcessInfo(kind=ProcessKind.STDOUT, text=line, data={"json": False}))
        await self.ctx.emit(
            Notice(
                kind=NoticeKind.LIFECYCLE.value,
                text="the ACP agent wrote a line that is not JSON-RPC; it was skipped",
                metadata={"code": "acp_unparseable_line"},
                data={"line": line[:2000]},
            )
        )

    async def _declined(self, params: dict[str, Any]) -> None:
        method, target = params["method"], params["target"]
        await self.ctx.emit(
            Notice(
                kind=NoticeKind.LIFECYCLE.value,
                text=f"declined {method} {target!r} from the ACP agent: this client does not serve it",
                metadata={"code": "acp_request_declined"},
                data=dict(params),
            )
        )

    async def _permission(self, item: Inbound) -> None:
        assert item.reply is not None
        call = item.params.get("toolCall") or {}
        call_id = str(call.get("toolCallId") or "")
        if call_id not in self.translator.record.tools:
            # The request introduces the tool call (codex-acp asks before it announces): it is published first,
            # so the approval and the result that follow belong to a known call.
            await self.ctx.emit_many(self.translator.events({**call, "sessionUpdate": "tool_call"}))
        known = {**self.translator.record.tools.get(call_id, {}), **call}
        own = self.hosted.own_name(host_tool_name(known, self.hosted)) if self.hosted is not None else None
        if own is not None and self.hosted is not None and own not in self.hosted.approval:
            # The Agent's own tools run without asking, except those declared with requires_approval=True.
            item.reply.set_result(answer(item.params, Decision(action="approve", by="host_tool")))
            return
        self.pending.append(item)
        request_id = f"acp-{self.agent.session_id}-{len(self.translator.record.items)}-{id(item)}"
        decision = await self.ctx.approvals.request(approval_spec(request_id, item.params))
        if not item.reply.done():
            item.reply.set_result(answer(item.params, decision))
        self.pending.remove(item)
        if decision.interrupt:
            self.cancel_sent = True
            await self.agent.conn.cancel(session_id=self.agent.session_id)

    async def _interrupt(self) -> None:
        """Claim the INTERRUPT messages and cancel the prompt; the next prompt carries them."""
        port = self.ctx.messages
        if port is None or self.interrupting:
            return
        self.interrupting = port.claim(Boundary.INTERRUPT)
        if not self.interrupting:
            self._watch(True)
            return
        self._answer_pending()
        self.cancel_sent = True
        with contextlib.suppress(Exception):  # a closed connection shows up as the prompt's failure next
            await self.agent.conn.cancel(session_id=self.agent.session_id)

    def _answer_pending(self) -> None:
        for item in self.pending:
            if item.reply is not None and not item.reply.done():
                item.reply.set_result({"outcome": "cancelled"})

    async def _cancel(self, prompt: asyncio.Future[Any]) -> None:
        """``session/cancel``, answer open permission requests ``cancelled``, then wait (bounded) for the prompt."""
        self._answer_pending()
        port = self.ctx.messages
        claimed, self.interrupting = self.interrupting, []
        for m in claimed:
            if port is not None:
                port.requeue(m)
        if prompt.done():
            self.finished = not prompt.cancelled() and prompt.exception() is None
            return

        async def stop() -> None:
            with contextlib.suppress(Exception):
                await self.agent.conn.cancel(session_id=self.agent.session_id)
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(prompt), self.grace)

        task = asyncio.ensure_future(stop())
        with contextlib.suppress(BaseException):
            await asyncio.shield(task)
        self.finished = prompt.done() and not prompt.cancelled() and prompt.exception() is None
        if not prompt.done():
            prompt.cancel()

    async def _failed(self, exc: BaseException) -> None:
        agent, record = self.agent, self.translator.record
        port = self.ctx.messages
        claimed, self.interrupting = self.interrupting, []
        for m in claimed:
            if port is not None:
                port.requeue(m)
        await agent.proc.wait_stderr(0.5)
        overflow = agent.transport.overflow if agent.transport is not None else None
        if overflow is not None:
            raise overflow.failure(
                f"the ACP agent {agent.proc.argv[0]!r}",
                exit_code=agent.proc.returncode,
                stderr_tail=agent.proc.stderr_tail(),
                session_id=agent.session_id,
                pid=agent.pid,
            )
        exited = agent.proc.has_exited()
        what = (
            f"the ACP agent exited during the turn (exit code {agent.proc.returncode})"
            if exited or isinstance(exc, ConnectionError)
            else f"the ACP agent failed the prompt: {_describe(exc, agent.proc.stderr_tail())}"
        )
        raise DriverFailure(
            what,
            details={"stderr_tail": agent.proc.stderr_tail(), "partial_text": record.text},
            session_id=agent.session_id,
        )

    async def _turn_end(self, response: dict[str, Any]) -> list[ClaimedMessage]:
        """Close the turn; the INTERRUPT messages that cancelled it (and any since) go with the next prompt."""
        ctx, record = self.ctx, self.translator.record
        stop = str(response.get("stopReason") or "")
        usage = wire_usage(response.get("usage")) or record.usage
        self.usage = Usage.add(self.usage, usage)
        for item in record.items:
            ctx.transcript(item)
        session = self.agent.session_id
        ctx.transcript(TranscriptItem(kind="text", text=record.text, model=self.model, session_id=session))
        if stop and stop != "end_turn":
            await ctx.emit(Notice(kind="acp.stop_reason", text=stop, metadata={"stop_reason": stop}))
        self._watch(False)
        more = await ctx.turn_end(usage=usage, text=record.text)
        port = ctx.messages
        batch, self.interrupting = self.interrupting, []
        if port is None:
            return []
        if not more:
            for m in batch:
                port.requeue(m)
            return []
        return batch + port.claim(Boundary.INTERRUPT) if batch else []

    def _outcome(self, response: dict[str, Any]) -> DriverOutcome:
        stop = str(response.get("stopReason") or "")
        return DriverOutcome(
            text=self.translator.record.text,
            model=self.model,
            provider=self.provider,
            usage=self.usage,
            metadata={"stop_reason": stop},
            session_id=self.agent.session_id,
        )


__all__ = ["Turn", "current_model", "open_session", "select_model"]
