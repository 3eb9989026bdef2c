"""The reference driver: an in-memory, scriptable provider that declares exactly what it does."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...driver import (
    FULL_APPROVALS,
    ApprovalKind,
    ApprovalSpec,
    Boundary,
    Choice,
    ClaimedMessage,
    ContinueMode,
    Descriptor,
    DriverFailure,
    DriverOutcome,
    FeatureLevel,
    IdentityCodec,
    InvalidDriverConfigError,
    Invocation,
    MessageCapabilities,
    Notice,
    Phase,
    PolicyCapabilities,
    ProcessInfo,
    ProcessKind,
    ResumeRejectedError,
    RunContext,
    SandboxLevel,
    StructuredOutputCapabilities,
    SubagentKind,
    SubagentUpdate,
    TextDelta,
    Thinking,
    ToolCall,
    ToolResult,
    TranscriptItem,
    Usage,
    mark_host_tool,
    text_delta,
)
from ._hosted import call_host_tool, host_directives
from ._sample import sample
from ._scenario import (
    Ask,
    Crash,
    Delay,
    Emit,
    Fail,
    Gate,
    HostCall,
    HostCalls,
    PlanReview,
    Scenario,
    Stderr,
    Structured,
    Subagent,
    Text,
    ThinkingStep,
    ToolUse,
    Turn,
    WaitForMessage,
)

SCRIPTED_NOTE = "offline demo driver: scripted replies"
_SESSIONS: dict[str, list[str]] = {}

DEFAULT_MESSAGES = MessageCapabilities(
    boundaries=frozenset({Boundary.IN_RUN, Boundary.TURN_END}),
    interrupt=True,
    continue_mode=ContinueMode.IN_RUN,
    confirmed_delivery=True,
)


@dataclass(frozen=True)
class Config:
    """Reference driver settings.

    ``scenario`` scripts every run (None: a short deterministic reply quoting the prompt); ``state_dir`` keeps
    sessions on disk so threads resume across processes; the other fields narrow what the driver declares.
    """

    scenario: Scenario | None = None
    state_dir: str | None = None
    model: str = "reference-scripted"
    messages: MessageCapabilities = DEFAULT_MESSAGES
    native_structured_output: bool = True
    resume: bool = True
    fork: bool = True
    instructions: str = ""
    extra: dict[str, str] = field(default_factory=dict)


class Driver:
    """An offline, deterministic driver; its replies say plainly that they are scripted."""

    session_codec = IdentityCodec()

    def __init__(self, config: Config | None = None, *, scenario: Scenario | None = None, **fields: Any) -> None:
        cfg = config or Config()
        if scenario is not None:
            cfg = replace(cfg, scenario=scenario)
        if fields:
            cfg = replace(cfg, **fields)
        self.config = cfg
        # Every supplemental message this driver delivered, as claimed: ``text`` is what an agent would be sent.
        self.delivered: list[ClaimedMessage] = []

    @property
    def name(self) -> str:
        return "reference"

    def __repr__(self) -> str:
        return f"reference.Driver(scenario={'yes' if self.config.scenario else 'default reply'})"

    def descriptor(self) -> Descriptor:
        c = self.config
        return Descriptor(
            name="reference",
            provider="reference",
            messages=c.messages,
            approvals=FULL_APPROVALS,
            # It never writes files, searches the web or opens a browser, so it can honour exactly these.
            policy=PolicyCapabilities(
                sandbox=frozenset({SandboxLevel.READ_ONLY}),
                web_search=frozenset({FeatureLevel.DENY}),
                browser=frozenset({FeatureLevel.DENY}),
            ),
            structured_output=StructuredOutputCapabilities(native=c.native_structured_output, prompted=True),
            resume=c.resume,
            fork=c.fork,
            persistent=False,
            scripted=True,
            host_tools=True,
        )

    def validate_config(self) -> None:
        c = self.config
        if c.scenario is not None and not isinstance(c.scenario, Scenario):
            raise InvalidDriverConfigError("reference.Config.scenario must be a Scenario", option="scenario")
        if c.state_dir is not None and not os.path.isdir(c.state_dir):
            raise InvalidDriverConfigError(
                f"reference.Config.state_dir: {c.state_dir!r} is not a directory", option="state_dir"
            )

    def config_fingerprint(self) -> str:
        return hashlib.sha256(f"reference|{self.config.model}|{self.config.instructions}".encode()).hexdigest()[:16]

    # -- sessions ----------------------------------------------------------------------------------------

    def _load(self, session_id: str) -> list[str] | None:
        if self.config.state_dir:
            path = Path(self.config.state_dir) / f"{session_id}.json"
            if not path.exists():
                return None
            data: list[str] = json.loads(path.read_text())
            return data
        got = _SESSIONS.get(session_id)
        return list(got) if got is not None else None

    def _save(self, session_id: str, prompts: list[str]) -> None:
        if self.config.state_dir:
            path = Path(self.config.state_dir) / f"{session_id}.json"
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(prompts))
            tmp.replace(path)
        else:
            _SESSIONS[session_id] = list(prompts)

    # -- the run -----------------------------------------------------------------------------------------

    async def run(self, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        inv = invocation
        history: list[str] = []
        if inv.resume is not None:
            found = self._load(inv.resume.session_id)
            if found is None:
                raise ResumeRejectedError(
                    f"no reference session {inv.resume.session_id!r} in this process", key=inv.thread_key
                )
            history = found
        session_id = uuid.uuid4().hex if (inv.resume is None or inv.fork) else inv.resume.session_id
        play = _Play(self, inv, ctx, history)
        model = inv.model or (self.config.scenario.model if self.config.scenario else self.config.model)
        await ctx.emit(
            ProcessInfo(
                kind=ProcessKind.SPAWN,
                text="reference driver (in memory, no process)",
                metadata={"pid": "0", "model": model},
            )
        )
        if self.config.scenario is None:
            await ctx.emit(Notice(kind="lifecycle", text=SCRIPTED_NOTE, metadata={"code": "scripted_driver"}))
        try:
            await play.run()
        finally:
            history.extend(play.prompts)
            if inv.thread_key:  # a direct send cannot be continued: nothing to keep
                self._save(session_id, history)
        return DriverOutcome(
            text=play.final_text,
            model=model,
            provider="reference",
            metadata={"scripted": "true"},
            structured=play.structured,
            has_structured=play.has_structured,
            session_id=session_id,
            healthy=True,
        )


class _Play:
    """Plays a scenario for one run."""

    def __init__(self, driver: Driver, inv: Invocation, ctx: RunContext, history: list[str]) -> None:
        self.d = driver
        self.inv = inv
        self.ctx = ctx
        self.history = history
        self.prompts: list[str] = [inv.prompt]
        self.final_text = ""
        self.structured: Any = None
        self.has_structured = False
        self._tool_n = 0
        self._host_log: list[tuple[str, str, bool]] = []
        self._unmatched = 0  # deliveries not yet consumed by a WaitForMessage step
        caps = driver.config.messages
        self._in_run = Boundary.IN_RUN in caps.boundaries
        self._turn_end = Boundary.TURN_END in caps.boundaries
        self._interrupt = caps.interrupt

    def _turn_for(self, index: int, inputs: list[str]) -> Turn:
        sc = self.d.config.scenario
        if sc is not None and index < len(sc.turns):
            return sc.turns[index]
        return self._default_turn(index, inputs)

    def _default_turn(self, index: int, inputs: list[str]) -> Turn:
        calls = host_directives(self.inv.prompt) if self.inv.tools is not None and index == 0 else ()
        if calls:
            return Turn(*calls, _HostSummary())  # type: ignore[arg-type]
        if self.inv.output_schema is not None and index == 0:
            value = sample(self.inv.output_schema.schema, prompt=self.inv.prompt)
            return Turn(Text(json.dumps(value)), Structured(value))
        quoted = " / ".join(_clip(t) for t in inputs)
        earlier = len(self.history)
        seen = f" This conversation has {earlier} earlier prompt{'s' if earlier != 1 else ''}." if earlier else ""
        if index == 0:
            return Turn(Text(f"Scripted reply ({SCRIPTED_NOTE}). You said: “{quoted}”.{seen}"))
        return Turn(Text(f"Scripted reply to your follow-up: “{quoted}”."))

    async def run(self) -> None:
        inputs = [self.inv.prompt]
        index = 0
        while True:
            self.ctx.set_turn_id(f"turn-{index + 1}")
            turn = self._turn_for(index, inputs)
            interrupted = await self._play_turn(turn)
            inputs = []
            more = await self.ctx.turn_end(usage=self._usage(turn), text=self._turn_text)
            index += 1
            if interrupted is not None:
                inputs = interrupted
                if more:
                    continue
                break
            if not more:
                break
            port = self.ctx.messages
            if port is not None and self._turn_end:
                claimed = port.claim(Boundary.TURN_END)
                if claimed:
                    for m in claimed:
                        self._deliver(m, Boundary.TURN_END, "next_turn")
                    inputs = [m.original for m in claimed]
                    continue
            if turn.auto_continue:
                continue
            break

    def _usage(self, turn: Turn) -> Usage:
        if turn.usage is not None:
            return Usage(input_tokens=turn.usage[0], output_tokens=turn.usage[1])
        return Usage(input_tokens=max(1, len(self.inv.prompt) // 4), output_tokens=max(1, len(self._turn_text) // 4))

    def _deliver(self, m: ClaimedMessage, boundary: Boundary, mechanism: str) -> None:
        assert self.ctx.messages is not None
        self.prompts.append(m.original)
        self.d.delivered.append(m)
        self._unmatched += 1
        self.ctx.messages.delivered(m, boundary=boundary, mechanism=mechanism)

    def _claim_in_run(self) -> None:
        port = self.ctx.messages
        if port is None or not self._in_run:
            return
        for m in port.claim(Boundary.IN_RUN):
            self._deliver(m, Boundary.IN_RUN, "in_run")

    def _claim_interrupt(self) -> list[str] | None:
        port = self.ctx.messages
        if port is None or not self._interrupt or not port.pending(Boundary.INTERRUPT):
            return None
        claimed = port.claim(Boundary.INTERRUPT)
        for m in claimed:
            self._deliver(m, Boundary.INTERRUPT, "interrupt")
        return [m.original for m in claimed]

    async def _play_turn(self, turn: Turn) -> list[str] | None:
        """Play the steps; returns the interrupting inputs if the turn was interrupted."""
        self._turn_text = ""
        for step in turn.steps:
            interrupted = self._claim_interrupt()
            if interrupted is not None:
                return interrupted
            self._claim_in_run()
            await self._step(step)
        interrupted = self._claim_interrupt()
        self._claim_in_run()
        return interrupted

    async def _step(self, step: Any) -> None:
        ctx = self.ctx
        if isinstance(step, Text):
            mid = f"msg-{uuid.uuid4().hex[:8]}"
            await ctx.emit(TextDelta(message_id=mid, phase=Phase.START))
            for i in range(0, len(step.text), max(1, step.chunk)):
                part = step.text[i : i + step.chunk]
                await ctx.emit(text_delta(part, mid))
            await ctx.emit(TextDelta(message_id=mid, phase=Phase.END))
            self._turn_text = join_blocks(self._turn_text, step.text)
            self.final_text = self._turn_text
            ctx.transcript(TranscriptItem(kind="text", text=step.text))
        elif isinstance(step, ThinkingStep):
            mid = f"think-{uuid.uuid4().hex[:8]}"
            await ctx.emit(Thinking(message_id=mid, phase=Phase.START))
            await ctx.emit(Thinking(text=step.text, message_id=mid))
            await ctx.emit(Thinking(message_id=mid, phase=Phase.END))
            ctx.transcript(TranscriptItem(kind="thinking", text=step.text))
        elif isinstance(step, ToolUse):
            await self._tool(step)
        elif isinstance(step, HostCall):
            await self._host_call(step)
        elif isinstance(step, HostCalls):
            await asyncio.gather(*(self._host_call(c) for c in step.calls))
        elif isinstance(step, _HostSummary):
            lines = [f"{name} → {'error: ' if bad else ''}{_clip(text)}" for name, text, bad in self._host_log]
            await self._step(Text(f"Scripted reply ({SCRIPTED_NOTE}). The Python tools answered:\n" + "\n".join(lines)))
        elif isinstance(step, Ask):
            # As a real CLI does: the model calls its question tool, and the question is asked about that call.
            tid = f"ask-{self._tool_n + 1}"
            await ctx.emit(ToolCall(id=tid, name="AskUserQuestion", phase=Phase.START))
            choices = tuple(Choice(key=c, label=c) for c in step.choices)
            decision = await ctx.approvals.request(
                ApprovalSpec(
                    kind=ApprovalKind.QUESTION,
                    title=step.question,
                    choices=choices,
                    tool_call_id=tid,
                    source="reference",
                )
            )
            answer = decision.answer if decision.action == "answer" else ""
            await self._tool(
                ToolUse(
                    "AskUserQuestion",
                    {"question": step.question, "answer": answer},
                    {"answer": answer} if answer else {"denied": decision.reason},
                    is_error=not answer,
                    id=tid,
                ),
                started=True,
            )
        elif isinstance(step, PlanReview):
            decision = await ctx.approvals.request(
                ApprovalSpec(kind=ApprovalKind.PLAN_REVIEW, title="Review the plan", details={"plan": step.plan})
            )
            verdict = "approved" if decision.allowed else f"rejected: {decision.reason}"
            await ctx.emit(Notice(kind="step", text=f"plan {verdict}", data={"phase": "finished", "plan": step.plan}))
        elif isinstance(step, Structured):
            self.structured = step.value
            self.has_structured = True
        elif isinstance(step, Fail):
            if step.stderr:
                ctx.raw_stderr(step.stderr.encode())
            raise DriverFailure(
                step.message,
                reason=step.reason,
                details={"stderr_tail": step.stderr} if step.stderr else {},
                retryable=step.retryable,
                retry_after=step.retry_after,
            )
        elif isinstance(step, Crash):
            raise RuntimeError(step.message)
        elif isinstance(step, Stderr):
            ctx.raw_stderr(step.text.encode())
            await ctx.emit(ProcessInfo(kind=ProcessKind.STDERR, text=step.text, bytes=step.text.encode()))
        elif isinstance(step, Delay):
            await asyncio.sleep(step.seconds)
        elif isinstance(step, Subagent):
            await ctx.emit(SubagentUpdate(task=step.task, state="running", kind=SubagentKind.STARTED))
            await ctx.emit(SubagentUpdate(task=step.task, delta=step.summary, kind=SubagentKind.DELTA))
            await ctx.emit(
                SubagentUpdate(task=step.task, state="completed", summary=step.summary, kind=SubagentKind.FINISHED)
            )
        elif isinstance(step, Emit):
            await ctx.emit_many(step.events)
        elif isinstance(step, Gate):
            await step.pass_through()
        elif isinstance(step, WaitForMessage):
            if ctx.messages is not None and self._unmatched == 0:
                await ctx.messages.wait()
            self._unmatched = 0
        else:
            raise TypeError(f"unknown scenario step {step!r}")

    async def _tool(self, step: ToolUse, *, started: bool = False) -> None:
        ctx = self.ctx
        self._tool_n += 1
        tid = step.id or f"tool-{self._tool_n}"
        if not started:
            await ctx.emit(ToolCall(id=tid, name=step.name, phase=Phase.START))
        args_json = json.dumps(step.args)
        for i in range(0, len(args_json), 24):
            await ctx.emit(ToolCall(id=tid, name=step.name, args_delta=args_json[i : i + 24], phase=Phase.CONTENT))
        await ctx.emit(ToolCall(id=tid, name=step.name, args=dict(step.args), phase=Phase.END))
        ctx.transcript(TranscriptItem(kind="tool_use", tool_use_id=tid, tool_name=step.name, input=dict(step.args)))
        result, is_error = dict(step.result), step.is_error
        if step.approval is not None:
            decision = await ctx.approvals.request(
                ApprovalSpec(
                    kind=step.approval,
                    title=f"Allow {step.name}?",
                    tool_call_id=tid,
                    details={"tool": step.name, "args": dict(step.args)},
                    source="reference",
                )
            )
            if not decision.allowed:
                result, is_error = {"denied": decision.reason or "denied"}, True
        await ctx.emit(ToolResult(id=tid, name=step.name, result=result, is_error=is_error))
        ctx.transcript(
            TranscriptItem(kind="tool_result", tool_use_id=tid, tool_name=step.name, input=result, is_error=is_error)
        )

    async def _host_call(self, step: HostCall) -> None:
        ctx, hosted = self.ctx, self.inv.tools
        self._tool_n += 1
        tid = step.id or f"tool-{self._tool_n}"
        cli_name = f"mcp__{hosted.server if hosted else 'pytools'}__{step.name}"

        async def emit(event: Any) -> None:
            await ctx.emit(mark_host_tool(event, hosted))

        await emit(ToolCall(id=tid, name=cli_name, phase=Phase.START))
        await emit(ToolCall(id=tid, name=cli_name, args_delta=json.dumps(step.args), phase=Phase.CONTENT))
        await emit(ToolCall(id=tid, name=cli_name, args=dict(step.args), phase=Phase.END))
        ctx.transcript(TranscriptItem(kind="tool_use", tool_use_id=tid, tool_name=step.name, input=dict(step.args)))
        if hosted is None or step.name not in hosted.names:
            text, is_error = f"no host tool named {step.name!r}", True
        else:
            allowed = True
            if step.name in hosted.approval:
                decision = await ctx.approvals.request(
                    ApprovalSpec(
                        kind=ApprovalKind.PERMISSION,
                        title=f"Allow {step.name}?",
                        tool_call_id=tid,
                        details={"tool_name": step.name, "args": dict(step.args), "host_tool": True},
                        source="reference",
                    )
                )
                allowed = decision.allowed
            if allowed:
                text, is_error = await call_host_tool(hosted, step.name, dict(step.args))
            else:
                text, is_error = "the user denied this call", True
        self._host_log.append((step.name, text, is_error))
        await emit(ToolResult(id=tid, name=cli_name, result={"content": text}, is_error=is_error))
        ctx.transcript(
            TranscriptItem(
                kind="tool_result", tool_use_id=tid, tool_name=step.name, input={"content": text}, is_error=is_error
            )
        )


class _HostSummary:
    """The default turn's last step after host-tool directives: report what the tools answered."""


def join_blocks(before: str, block: str) -> str:
    """The turn's text with one more text block: separated by a space unless either side already has one."""
    if before and block and not before[-1].isspace() and not block[0].isspace():
        return f"{before} {block}"
    return before + block


def _clip(text: str, n: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
