"""One run on an agent process: open or load the session, send ``session/prompt``, publish the updates, answer
permission requests through the core, cancel with ``session/cancel``."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from ...driver import (
    DriverFailure,
    DriverOutcome,
    ImageInput,
    Invocation,
    Notice,
    ResumeRejectedError,
    RunContext,
    Stdio,
    TranscriptItem,
)
from ._approvals import answer, approval_spec
from ._process import AgentProcess, Inbound, wire
from ._sdk import sdk
from ._translate import Translator, wire_usage

AUTH_REQUIRED = -32000


def mcp_servers(inv: Invocation) -> list[Any]:
    """The Agent's stdio MCP servers as ACP ``McpServerStdio`` declarations."""
    schema = sdk().schema
    out: list[Any] = []
    for server in inv.mcp or ():
        if isinstance(server, Stdio):
            env = [schema.EnvVariable(name=k, value=v) for k, v in server.env.items()]
            out.append(schema.McpServerStdio(name=server.name, command=server.command, args=list(server.args), env=env))
    return out


async def open_session(agent: AgentProcess, inv: Invocation, cwd: str, timeout: float, mode: str) -> None:
    """``session/new`` (or ``session/load`` for a resume) with the workspace as cwd; then the configured mode."""
    if agent.session_id:
        return
    servers = mcp_servers(inv)
    name = agent.proc.argv[0]
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
                "credential (see acp.preset(...).auth) and run again",
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


def _describe(exc: BaseException) -> str:
    """A JSON-RPC error with the details the agent put in its ``data``."""
    data = getattr(exc, "data", None)
    details = data.get("details") if isinstance(data, dict) else data
    return f"{exc} ({details})" if details else str(exc)


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
    """One ``session/prompt`` on ``agent``: events out, approvals through the core, a DriverOutcome back."""

    def __init__(self, agent: AgentProcess, ctx: RunContext, provider: str, model: str, grace: float) -> None:
        self.agent = agent
        self.ctx = ctx
        self.provider = provider
        self.model = model
        self.grace = grace
        self.inbound: asyncio.Queue[Inbound] = asyncio.Queue()
        self.translator = Translator(agent.session_id, model)
        self.pending: list[Inbound] = []
        self.finished = False

    async def execute(self, text: str, images: tuple[ImageInput, ...] = ()) -> DriverOutcome:
        agent, ctx = self.agent, self.ctx
        agent.attach(ctx, self.inbound)
        acp = sdk()
        # Images first, then the text, as the other drivers send them; only agents advertising
        # promptCapabilities.image get any (see Driver.run).
        blocks = [*(acp.image_block(i.base64(), i.media_type) for i in images), acp.text_block(text)]
        prompt = asyncio.ensure_future(agent.conn.prompt(session_id=agent.session_id, prompt=blocks))
        prompt.add_done_callback(lambda _: self.inbound.put_nowait(Inbound("done")))
        try:
            while True:
                item = await self.inbound.get()
                if item.kind == "done":
                    break
                if item.kind == "update":
                    await ctx.emit_many(self.translator.events(item.params))
                elif item.kind == "permission":
                    await self._permission(item)
        except BaseException:
            await self._cancel(prompt)
            raise
        self.finished = True
        return await self._outcome(prompt)

    async def _permission(self, item: Inbound) -> None:
        assert item.reply is not None
        self.pending.append(item)
        request_id = f"acp-{self.agent.session_id}-{len(self.translator.record.items)}-{id(item)}"
        decision = await self.ctx.approvals.request(approval_spec(request_id, item.params))
        if not item.reply.done():
            item.reply.set_result(answer(item.params, decision))
        self.pending.remove(item)
        if decision.interrupt:
            await self.agent.conn.cancel(session_id=self.agent.session_id)

    async def _cancel(self, prompt: asyncio.Future[Any]) -> None:
        """``session/cancel``, answer open permission requests ``cancelled``, then wait (bounded) for the prompt."""
        for item in self.pending:
            if item.reply is not None and not item.reply.done():
                item.reply.set_result({"outcome": "cancelled"})
        if prompt.done():
            self.finished = True
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

    async def _outcome(self, prompt: asyncio.Future[Any]) -> DriverOutcome:
        agent, ctx, record = self.agent, self.ctx, self.translator.record
        exc = prompt.exception()
        if exc is not None:
            await agent.proc.wait_stderr(0.5)
            exited = agent.proc.has_exited()
            what = (
                f"the ACP agent exited during the turn (exit code {agent.proc.returncode})"
                if exited or isinstance(exc, ConnectionError)
                else f"the ACP agent failed the prompt: {_describe(exc)}"
            )
            raise DriverFailure(
                what,
                details={"stderr_tail": agent.proc.stderr_tail(), "partial_text": record.text},
                session_id=agent.session_id,
            )
        response = wire(prompt.result())
        stop = str(response.get("stopReason") or "")
        usage = wire_usage(response.get("usage")) or record.usage
        for item in record.items:
            ctx.transcript(item)
        text = record.text
        ctx.transcript(TranscriptItem(kind="text", text=text, model=self.model, session_id=agent.session_id))
        if stop and stop != "end_turn":
            await ctx.emit(Notice(kind="acp.stop_reason", text=stop, metadata={"stop_reason": stop}))
        await ctx.turn_end(usage=usage, text=text)
        return DriverOutcome(
            text=text,
            model=self.model,
            provider=self.provider,
            usage=usage,
            metadata={"stop_reason": stop},
            session_id=agent.session_id,
        )


__all__ = ["Turn", "current_model", "mcp_servers", "open_session", "select_model"]
