"""One execution: checks, thread planning, the driver task, results, checkpoints and the final Done."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from .._enums import (
    Boundary,
    ContinueMode,
    FailureReason,
    MessageFailure,
)
from .._errors import (
    AdaptorError,
    AgentClosedError,
    ConfigError,
    InvalidDriverConfigError,
    InvalidOutputSchemaError,
    PolicyViolation,
    ResumeRejectedError,
    RunCancelled,
    RunError,
    StructuredOutputUnsupportedError,
)
from .._events import (
    Done,
    Notice,
    RunFinished,
    RunStarted,
    TurnEnd,
)
from .._host_identity import bind_identity
from .._images import ImageInput, prompt_images_item
from .._policy import Author
from .._result import RawStreams, Result
from .._schema import ResolvedSchema, parse_json_text, prompt_suffix, resolve_schema, validation_errors
from ..driver._spi import (
    Checkpoint,
    Descriptor,
    Driver,
    DriverFailure,
    DriverOutcome,
    Invocation,
    OutputSchema,
)
from ..driver._tap import run_driver
from ._approvals import ApprovalAbort, CoreApprovals
from ._binding import ThreadBinding, ThreadPlan
from ._broker import Broker
from ._checks import check_images, check_policy, check_resources, check_resume_prerequisite
from ._context import RunContextImpl
from ._hosting import HostedRun, check_thread_tools
from ._mcp_check import check_mcp
from ._messages import MessageQueue
from ._options import AgentSettings, RunSettings
from ._profile import Prepared, ProfileManager
from ._redact import Redaction, run_secrets
from ._resolver import resolve_messages
from ._services import RunServices
from ._slots import ProcessSlots
from ._version_trim import check_message_version
from ._work_clock import WorkClock
from ._workspace import RunProvision, check_provisioning, finish_provision

STDERR_TAIL = 4000
DEADLINE_CAUSE = "the run exceeded its execution_timeout"

T = TypeVar("T")


@dataclass(frozen=True)
class RunHost:
    """What an execution needs from the Agent's runtime: driver, limits, process slots, closed flag, end hook."""

    driver: Driver
    descriptor: Descriptor
    agent_settings: AgentSettings
    slots: ProcessSlots
    is_closed: Callable[[], bool]
    on_finished: Callable[[Execution], None]
    profile: ProfileManager | None = None
    tool_host: Any = None


class Execution:
    """Runs one send: from capability checks to Done. Created by Agent/Thread/Standby."""

    def __init__(
        self,
        host: RunHost,
        settings: RunSettings,
        prompt: str,
        call: dict[str, Any],
        *,
        binding: ThreadBinding | None = None,
        config_error: BaseException | None = None,
        start_id: str | None = None,
        start_author: Author | None = None,
    ) -> None:
        self._host = host
        self.driver: Driver = host.driver
        self.desc: Descriptor = host.descriptor
        self.settings = settings
        self.prompt = prompt
        self.call = call
        self.images: tuple[ImageInput, ...] = call.get("images") or ()
        self.binding = binding
        self.thread_key = binding.key if binding else ""
        self.run_id = f"run_{uuid.uuid4().hex[:16]}"
        self.max_turns = settings.policy.messages.effective_max_turns
        self.broker = Broker(
            self.run_id, self.thread_key, host.agent_settings.event_buffer, host.agent_settings.blocking_events
        )
        self.queue = MessageQueue(
            self.broker,
            settings.policy.messages,
            self.desc.messages,
            turns=lambda: self.ctx.turns if self.ctx else 0,
            max_turns=self.max_turns,
        )
        self.queue.starting_id = start_id or ""
        self.clock = WorkClock()
        self.approvals = CoreApprovals(
            self.broker,
            settings.policy.approvals,
            settings.on_approval,
            run_id=self.run_id,
            retry_supported=self.desc.approvals.retry,
            wait_for_consumer=binding.standby.wait_for_consumer if binding and binding.standby else None,
            clock=self.clock,
        )
        self.ctx: RunContextImpl | None = None
        self.run_services = RunServices(settings.run_services, self.run_id, self.broker)
        self.provision = RunProvision(host.agent_settings, self.run_id, self.thread_key, self.notice)
        self._config_error = config_error
        self._driver_task: asyncio.Task[DriverOutcome] | None = None
        self._startup_task: asyncio.Task[Any] | None = None  # a probe before the driver runs (see _before_driver)
        self._cancel_cause = ""
        self._t0 = time.monotonic()
        loop = asyncio.get_running_loop()
        self._loop = loop
        self.future: asyncio.Future[Result] = loop.create_future()
        self.done_event: Done | None = None
        self.plan: ThreadPlan | None = None
        self.last_outcome: DriverOutcome | None = None
        self._started = False
        self._early: list[Notice] = []
        self.prepared = Prepared(mcp=settings.mcp)
        self._tools = HostedRun(host.tool_host, self.thread_key or self.run_id)
        self.task = loop.create_task(self._main(), name=f"adaptor_nb {self.run_id}")

    # -- control -----------------------------------------------------------------------------------------

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    @property
    def finished(self) -> bool:
        return self.future.done()

    def cancel(self, cause: str = "cancelled by the caller") -> None:
        """Idempotent and thread-safe."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            self._cancel(cause)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._cancel, cause)

    def _cancel(self, cause: str) -> None:
        if self.future.done() or self._cancel_cause:
            return
        self._cancel_cause = cause
        self.broker.discard_ordinary()
        self.queue.cancel_pending()
        self.approvals.expire_all()
        self._tools.end(cancel=True)
        if self._driver_task is not None and not self._driver_task.done():
            self._driver_task.cancel()
        if self._startup_task is not None and not self._startup_task.done():
            self._startup_task.cancel()

    async def _before_driver(self, step: Coroutine[Any, Any, T]) -> T:
        """Await ``step`` (a probe of the CLI that runs before the driver, such as its version) so that ``cancel()``
        ends it at once: a CLI that never answers must not hold the run for its start-up timeout."""
        task = self._loop.create_task(step)
        self._startup_task = task
        try:
            return await task
        finally:
            self._startup_task = None

    def _check_cancelled(self) -> None:
        if self._cancel_cause:
            raise RunCancelled(self._cancel_cause, result=self._partial())

    # -- the pipeline ------------------------------------------------------------------------------------

    async def _main(self) -> None:
        result: Result | None = None
        error: BaseException | None = None
        bind_identity(self.settings.identity)  # this task's context: host hooks it calls read it
        try:
            result = await self._execute()
        except AdaptorError as exc:
            error = exc
        except asyncio.CancelledError:
            error = RunCancelled(self._cancel_cause or "the run's task was cancelled", result=self._partial())
        except Exception as exc:  # a bug or an unexpected driver error: still end with Done
            error = RunError.for_reason(
                FailureReason.AGENT_ERROR,
                f"internal error: {type(exc).__name__}: {exc}",
                result=self._partial(),
            )
        await self._finalize(result, error)

    async def _execute(self) -> Result:
        if self._config_error is not None:
            raise self._config_error
        if self._host.is_closed():
            raise AgentClosedError("the Agent is closed; create a new Agent to start runs")
        s = self.settings
        try:
            self.driver.validate_config()
        except InvalidDriverConfigError:
            raise
        except ConfigError as exc:
            raise InvalidDriverConfigError(str(exc), option=exc.option) from None
        check_policy(s.policy, self.desc)
        check_images(self.images, self.desc)
        check_resources(self._host.agent_settings, s, self.desc)
        if self.binding is not None:
            check_resume_prerequisite(self.driver, self.desc)
            if self._host.tool_host is not None:
                check_thread_tools(tuple(self._host.tool_host.tools.values()))
        if self._host.profile is not None:  # skills and profile resources, materialized before launch
            self.prepared = await self._host.profile.prepare(s)
        check_mcp(self.prepared.mcp, self.desc)
        if self.queue.enabled and (
            resolved := await self._before_driver(resolve_messages(self.driver, self.desc.messages))
        ):
            self.desc = replace(self.desc, messages=resolved[0])
            self.queue.trim(resolved[0])
            self.notice(resolved[1])
        if self.queue.enabled and (trim := await self._before_driver(check_message_version(self.driver, self.desc))):
            self.desc = replace(self.desc, messages=trim[0])  # one Notice; input continues by resume
            self.queue.trim(trim[0])
            self.notice(trim[1])
        schema = self._resolve_schema()
        self.ctx = RunContextImpl(
            run_id=self.run_id,
            thread_key=self.thread_key,
            broker=self.broker,
            queue=self.queue,
            approvals=self.approvals,
            max_turns=self.max_turns,
        )
        self.queue.on_delivered = self.ctx.message_delivered
        self._check_cancelled()
        check_provisioning(self._host.agent_settings, s)
        s = self.settings = await self.provision.prepare(s, self.desc.name, getattr(self.driver, "config", None))
        check_mcp(self.provision.mcp_for(self.prepared.mcp), self.desc)
        if self.binding is not None:
            self.plan = await self.binding.begin(self.run_id, s, self.notice)
            self.queue.set_receipts(self.plan.receipts)
            if self.queue.starting_id and self.queue.starting_id in self.plan.receipts:
                self._run_started()
                self.plan.duplicate = True
                return Result(run_id=self.run_id, thread_key=self.thread_key, provider=self.desc.provider)
        self._check_cancelled()
        self._run_started()
        if self.images:  # the record keeps what the prompt carried, never the bytes
            self.ctx.transcript(prompt_images_item(self.images))
        await self._attach_services()
        await self._tools.start(self.desc, self.notice)
        outcome = await self._invoke(schema)
        self.last_outcome = outcome
        outcome = await self._continue_by_resume(outcome, schema)
        self.last_outcome = outcome
        result = self._build(outcome)
        if schema is not None:
            self._apply_schema(schema, outcome, result)
        return result

    async def _attach_services(self) -> None:
        """Attach the run service providers before launch (their preambles go in front of the prompt)."""
        if not self.settings.run_services:
            return
        try:
            await self.run_services.attach()
        except AdaptorError:
            raise
        except Exception as exc:
            raise RunError.for_reason(
                FailureReason.AGENT_ERROR,
                f"a run service provider failed to attach: {type(exc).__name__}: {exc}",
                result=self._partial(),
            ) from exc
        self._check_cancelled()

    async def _detach_services(self, result: Result | None, error: BaseException | None) -> BaseException | None:
        """Collect attachment results, then detach (bounded); cleanup errors join the outcome."""
        target = result if result is not None else (error.result if isinstance(error, RunError) else None)
        subagents, errors = self.run_services.results()
        errors += await self.run_services.detach()
        if target is not None:
            target._subagents.extend(subagents)
            target._services.extend(self.run_services.services())
        if not errors:
            return error
        message = "run service cleanup failed: " + "; ".join(errors)
        if error is None:
            return RunError.for_reason(
                FailureReason.AGENT_ERROR, message, result=result, details={"cleanup_errors": errors}
            )
        if isinstance(error, RunError):
            error.details.setdefault("cleanup_errors", errors)
        error.add_note(message)
        return error

    def notice(self, notice: Notice) -> None:
        """Publish a core notice; notices from planning wait until RunStarted has gone out."""
        if self._started:
            self.broker.publish_critical(notice)
        else:
            self._early.append(notice)

    def _run_started(self) -> None:
        self._started = True
        if self.queue.starting_id:
            # The starting prompt is handed to the provider from here on: keep its id as a receipt.
            self.queue.new_receipts[self.queue.starting_id] = time.time()
        self.broker.publish_critical(RunStarted(run_id=self.run_id, thread_id=self.thread_key))
        early, self._early = self._early, []
        for n in early:
            self.broker.publish_critical(n)

    def _resolve_schema(self) -> ResolvedSchema | None:
        if self.settings.output_schema_error is not None:
            err = self.settings.output_schema_error
            if isinstance(err, AdaptorError):
                raise err
            raise InvalidOutputSchemaError(f"the output schema could not be derived: {err}", option="schema") from err
        if self.call.get("schema") is None:
            rs = self.settings.output_schema
            if rs is None:
                return None
        else:
            rs = resolve_schema(
                self.call["schema"],
                name=self.call.get("schema_name"),
                description=self.call.get("schema_description"),
                return_invalid=bool(self.call.get("schema_return_invalid", False)),
                inline_references=bool(self.call.get("schema_inline_references", False)),
                allow_additional_properties=bool(self.call.get("schema_allow_additional_properties", False)),
                require_explicit_tags=bool(self.call.get("schema_require_explicit_tags", False)),
            )
        so = self.desc.structured_output
        if not so.native and not so.prompted:
            raise StructuredOutputUnsupportedError(
                f"driver {self.desc.name!r} offers no structured output (neither native nor prompted)",
                option="schema",
            )
        return rs

    def _invocation(
        self,
        schema: ResolvedSchema | None,
        prompt: str,
        *,
        resume: Any,
        fork: bool,
        images: tuple[ImageInput, ...] = (),
    ) -> Invocation:
        s = self.settings
        native = schema is not None and self.desc.structured_output.native
        if schema is not None and not native:
            prompt = prompt + prompt_suffix(schema)
        slot = None
        if self.binding is not None and self.desc.persistent and not s.spawn:
            slot = self._host.slots.slot_for(self.thread_key)
        return Invocation(
            run_id=self.run_id,
            prompt=prompt,
            thread_key=self.thread_key,
            model=s.model,
            instructions="\n\n".join(
                t for t in (s.instructions, self.prepared.instructions, s.append_instructions) if t
            ),
            workspace=s.workspace,
            timeout=s.timeout,
            metadata=dict(s.metadata),
            identity=s.identity,
            policy=s.policy,
            output_schema=(
                OutputSchema(
                    schema=schema.provider_schema(),
                    name=schema.name,
                    description=schema.description,
                    native=True,
                )
                if native and schema is not None
                else None
            ),
            resume=resume,
            fork=fork,
            spawn=s.spawn,
            slot=slot,
            max_turns=self.max_turns,
            mcp=self.provision.mcp_for(self.prepared.mcp),
            env={**self.prepared.env, **self.provision.env},
            tools=self._tools.hosted,
            images=images,
        )

    async def _invoke(self, schema: ResolvedSchema | None) -> DriverOutcome:
        plan = self.plan
        prompt = self.prompt
        resume = plan.resume if plan else None
        fork = plan.fork if plan else False
        if plan is not None and plan.prefix:
            prompt = plan.prefix + prompt
        prompt = self.run_services.preamble + prompt
        if self.binding is not None and self.settings.spawn:
            await self._host.slots.close(self.thread_key)
        try:
            return await self._run_driver(
                self._invocation(schema, prompt, resume=resume, fork=fork, images=self.images)
            )
        except ResumeRejectedError as exc:
            if plan is None or self.binding is None or self.binding.resume_only or plan.fell_back:
                raise
            plan.fell_back = True
            self.binding.fall_back(plan, "resume_rejected", str(exc), self.notice)
            return await self._run_driver(
                self._invocation(
                    schema,
                    self.run_services.preamble + plan.prefix + self.prompt,
                    resume=None,
                    fork=False,
                    images=self.images,
                )
            )

    def _redaction(self, inv: Invocation) -> Redaction:
        """The secrets of this invocation, redacted from all the driver reports (see ``_redact``)."""
        services = [v for r in self.provision.refs for v in r.secret_env.values()]
        secrets = run_secrets(getattr(self.driver, "config", None), env=inv.env, explicit=services)
        ctx = self.ctx
        if ctx is not None and ctx.redaction is not None:
            ctx.redaction.add(secrets)
            return ctx.redaction
        return Redaction(secrets)

    async def _run_driver(self, inv: Invocation) -> DriverOutcome:
        self._check_cancelled()
        assert self.ctx is not None
        redaction = self._redaction(inv)
        self.ctx.redact_with(redaction)
        try:
            outcome = await self._drive(inv)
        except BaseException as exc:
            if redaction:
                redaction.exception(exc)
            raise
        return outcome

    def _clean(self, outcome: DriverOutcome) -> DriverOutcome:
        redaction = self.ctx.redaction if self.ctx is not None else None
        return outcome if redaction is None else redaction.value(outcome)

    async def _drive(self, inv: Invocation) -> DriverOutcome:
        assert self.ctx is not None
        self.ctx.turn_open = True
        # through a cassette tap if any
        task = self._loop.create_task(run_driver(self.driver, inv, self.ctx, scripted=self.desc.scripted))
        self._driver_task = task
        timeout = self.settings.timeout
        deadline = None if timeout is None else self._t0 + timeout
        budget = self.settings.execution_timeout
        working = None if budget is None else self._loop.create_task(self.clock.run_out(budget))
        try:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            waits: set[asyncio.Task[Any]] = {task} if working is None else {task, working}
            done, _ = await asyncio.wait(waits, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
            if working is not None and working in done and task not in done:
                assert budget is not None
                self._cancel(f"{DEADLINE_CAUSE} ({budget:g} s of work, approval waits not counted)")
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(asyncio.shield(task), 30)
            elif not done:
                self._cancel(f"the run timed out after {timeout:g} s")
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(asyncio.shield(task), 30)
        except asyncio.CancelledError:
            task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(task), 30)
            self.ctx.end_streams()
            raise
        finally:
            if working is not None:
                working.cancel()
        self.ctx.end_streams()
        if self._cancel_cause.startswith(DEADLINE_CAUSE):
            raise RunError.for_reason(
                FailureReason.DEADLINE_EXCEEDED,
                self._cancel_cause,
                result=self._partial(),
                details={"execution_timeout": budget, "working_seconds": round(self.clock.elapsed(), 3)},
            )
        if task.cancelled() or not task.done():
            raise RunCancelled(
                self._cancel_cause or "the driver task was cancelled",
                result=self._partial(),
                details={"timeout": timeout} if self._cancel_cause.startswith("the run timed out") else {},
            )
        exc = task.exception()
        if exc is None and self._cancel_cause:
            # The driver swallowed the cancellation: the run was still cancelled (its answer ended no turn).
            self.ctx.turn_open = False
            raise RunCancelled(self._cancel_cause, result=self._partial(self._clean(task.result())))
        if exc is None:
            outcome = self._clean(task.result())
            if outcome.failure is not None:
                raise self._failure(outcome.failure, outcome)
            return outcome
        if isinstance(exc, ApprovalAbort):
            raise RunError.for_reason(exc.reason, exc.message, result=self._partial(), details=exc.details)
        if isinstance(exc, DriverFailure):
            raise self._failure(exc, None)
        if isinstance(exc, AdaptorError):
            raise exc
        if isinstance(exc, asyncio.CancelledError):
            raise RunCancelled(self._cancel_cause or "cancelled", result=self._partial())
        # An OS-level error escaping the driver (a CLI that cannot be started, a connection refused) is the
        # machinery failing, not the model; anything else is the driver's own fault.
        reason = FailureReason.INFRASTRUCTURE if isinstance(exc, OSError) else FailureReason.AGENT_ERROR
        raise RunError.for_reason(
            reason,
            f"driver {self.desc.name!r} crashed: {type(exc).__name__}: {exc}",
            result=self._partial(),
            details={"exception": type(exc).__name__},
            cause=exc,
        )

    def _failure(self, f: DriverFailure, outcome: DriverOutcome | None) -> RunError:
        details = dict(f.details)
        if f.retryable:
            details.setdefault("retryable", True)
        if f.retry_after is not None:
            details.setdefault("retry_after", f.retry_after)
        cause = f.cause or f.__cause__ or f  # the driver's classified failure, or what it wraps
        return RunError.for_reason(f.reason, f.message, result=self._partial(outcome), details=details, cause=cause)

    async def _continue_by_resume(self, outcome: DriverOutcome, schema: ResolvedSchema | None) -> DriverOutcome:
        """ContinueMode.RESUME: the core continues with queued input through the run's fresh checkpoint."""
        if self.desc.messages.continue_mode is not ContinueMode.RESUME or not self.queue.enabled:
            return outcome
        assert self.ctx is not None
        while (
            outcome.session_id
            and self.queue.pending(Boundary.TURN_END)
            and self.ctx.turns < self.max_turns
            and not self._cancel_cause
        ):
            claimed = self.queue.claim(Boundary.TURN_END)
            prompt = "\n\n".join(m.text for m in claimed)
            ckpt = self.binding.checkpoint_for(self.plan, self.run_id, outcome) if self.binding else None
            if ckpt is None:
                ckpt = Checkpoint(session_id=outcome.session_id, driver=self.desc.name, fingerprint="")
            # The resumed invocation is the delivery: the input starts the next turn.
            for m in claimed:
                self.queue.delivered(m, boundary=Boundary.TURN_END, mechanism="resume")
            nxt = await self._run_driver(self._invocation(schema, prompt, resume=ckpt, fork=False))
            outcome = nxt
        return outcome

    # -- results -----------------------------------------------------------------------------------------

    def _build(self, outcome: DriverOutcome | None) -> Result:
        ctx = self.ctx
        if ctx is None:
            return Result(run_id=self.run_id, thread_key=self.thread_key, provider=self.desc.provider)
        text = (
            outcome.text if outcome is not None and outcome.text is not None else (ctx.last_text or ctx.current_text())
        )
        if outcome is None and ctx.current_text():
            text = ctx.current_text() if not ctx.last_text else ctx.last_text + ctx.current_text()
        usage = outcome.usage if outcome is not None and outcome.usage is not None else ctx.usage
        turns = ctx.turns if ctx.turns or outcome is None else 1
        r = Result(
            turns=turns,
            run_id=self.run_id,
            model=(outcome.model if outcome else "") or self.settings.model,
            provider=(outcome.provider if outcome else "") or self.desc.provider,
            text=text,
            usage=usage,
            metadata=dict(outcome.metadata) if outcome else {},
            thread_key=self.thread_key,
            duration=time.monotonic() - self._t0,
        )
        r._raw = RawStreams(terminal=ctx.terminal_payload)
        r._raw_chunks = (list(ctx.stdout), list(ctx.stderr))  # joined on first use: most results never need them
        r._transcript = list(ctx.items)
        r._messages = self.queue.outcomes()
        r._subagents = list(ctx.subagents.values())
        if outcome is not None and outcome.has_structured:
            r._structured = outcome.structured
            r._has_structured = True
        return r

    def _partial(self, outcome: DriverOutcome | None = None) -> Result:
        try:
            return self._build(outcome)
        except Exception:  # a partial result that cannot be built must not stop the run from ending with Done
            return Result(run_id=self.run_id, thread_key=self.thread_key, provider=self.desc.provider)

    def _apply_schema(self, rs: ResolvedSchema, outcome: DriverOutcome, result: Result) -> None:
        native = self.desc.structured_output.native
        if native and outcome.has_structured:
            value: Any = outcome.structured
            schema = rs.provider_schema()
        else:
            try:
                value = parse_json_text(result.text)
            except ValueError as exc:
                self._invalid(rs, result, None, [f"the answer is not JSON: {exc}"])
                return
            schema = rs.schema
            if native and rs.wrapped and isinstance(value, dict) and "items" in value:
                schema = rs.provider_schema()
        errors = validation_errors(schema, value)
        value = rs.unwrap(value) if schema is not rs.schema else value
        if errors:
            self._invalid(rs, result, value, errors)
            return
        result._structured = value
        result._has_structured = True

    def _invalid(self, rs: ResolvedSchema, result: Result, value: Any, errors: list[str]) -> None:
        result.metadata["structured_output.valid"] = "false"
        if rs.return_invalid:
            result._structured = value
            result._has_structured = value is not None
            return
        result._structured = None
        result._has_structured = False
        raise PolicyViolation(
            f"the output does not match schema {rs.name!r}: " + "; ".join(errors[:5]),
            result=result,
            details={"errors": errors, "schema": rs.name},
        )

    # -- the end -----------------------------------------------------------------------------------------

    async def _finalize(self, result: Result | None, error: BaseException | None) -> None:
        self._tools.end(cancel=False)
        if isinstance(error, RunCancelled) or self._cancel_cause:
            reason = MessageFailure.CANCELLED
        else:
            reason = MessageFailure.RUN_FAILED
        if self.ctx is not None and self.ctx.turns >= self.max_turns:
            self.queue.limit_reached = True
        self.queue.finish(reason)
        self.approvals.expire_all()
        final_messages = self.queue.outcomes()
        if result is not None:
            result._messages = final_messages
        if isinstance(error, RunError) and error.result is not None:
            error.result._messages = final_messages
        if self.run_services.active:
            joined = await self._detach_services(result, error)
            if joined is not error:
                error, result = joined, None
        if self.provision.active:
            result, error = await finish_provision(self.provision, result, error)
        if self.binding is not None and self.plan is not None:
            try:
                await self.binding.finish(
                    self.plan,
                    self.run_id,
                    result,
                    error,
                    outcome=self.last_outcome,
                    delivered=self.queue.delivered_entries(),
                    receipts=self.queue.new_receipts,
                    notice=self.notice,
                )
            except AdaptorError as exc:
                if error is None:
                    error, result = self._not_saved(exc, result), None
        elif self.binding is not None:
            self.binding.abandon(self.run_id)
        usage = (
            result.usage
            if result is not None
            else (error.result.usage if isinstance(error, RunError) and error.result else None)
        )
        ctx = self.ctx
        if ctx is not None and ctx.activity.open:
            self._close_capabilities(ctx, result, error)
        if self._started and isinstance(error, AdaptorError) and ctx is not None and ctx.turn_open:
            # The turn in progress failed: it still gets its TurnEnd, carrying the error.
            partial = Result(turns=1, run_id=self.run_id, text=ctx.current_text(), thread_key=self.thread_key)
            self.broker.publish_critical(TurnEnd(turn=ctx.turns + 1, result=partial, err=error))
            if isinstance(error, RunError) and error.result is not None:
                error.result.turns = ctx.turns + 1  # the failed turn was a provider turn too
        if self._started:
            self.broker.publish_critical(
                RunFinished(
                    run_id=self.run_id,
                    thread_id=self.thread_key,
                    usage=usage,
                    failed=error is not None,
                    reason=error.reason if isinstance(error, RunError) else None,
                    message=str(error) if error is not None else "",
                )
            )
        self.done_event = self.broker.close(Done(result=result, err=error))
        if error is not None:
            self.future.set_exception(error)
            self.future.exception()  # mark retrieved: callers may read it through Done instead
        else:
            assert result is not None
            self.future.set_result(result)
        self._host.on_finished(self)

    def _close_capabilities(self, ctx: RunContextImpl, result: Result | None, error: BaseException | None) -> None:
        """End, with ``ok=False``, every capability the driver left open; the ends join the transcript too."""
        why = "the run was cancelled" if isinstance(error, RunCancelled) else "the run ended before it finished"
        partial = error.result if isinstance(error, RunError) else None
        for end, item in ctx.activity.close_open(why):
            ctx.items.append(item)
            for r in (result, partial):
                if r is not None:
                    r._transcript.append(item)
            self.broker.publish_critical(end)

    def _not_saved(self, exc: AdaptorError, result: Result | None) -> AdaptorError:
        """A run that finished but whose thread store could not be used: a RunError naming the store, carrying the
        result; the checkpoint stays in this process for the next send."""
        from ..threadstore._errors import ThreadStoreError

        if not isinstance(exc, ThreadStoreError):
            return exc
        error = RunError.for_reason(
            FailureReason.AGENT_ERROR,
            f"the run finished but thread {self.thread_key!r} was not saved; its checkpoint stays in this process "
            f"for the next send: {exc}",
            result=result,
            details={**exc.details, "retained_in_process": True},
        )
        error.__cause__ = exc
        return error

    async def wait(self) -> Result:
        self.broker.result_requested()
        return await asyncio.shield(self.future)


def with_thread_key(result: Result, key: str) -> Result:
    return replace(result, thread_key=key)


__all__ = ["Execution", "RunContextImpl", "RunHost"]
