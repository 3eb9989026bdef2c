"""The error tree: one root, misuse errors apart from run failures, structured fields on each."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._enums import FailureReason, MessageFailure

if TYPE_CHECKING:
    from ._result import Result


class AdaptorError(Exception):
    """Root of every error adaptor_nb raises on purpose."""


# --- run failures (business outcome, carry the partial Result) -------------------------------------------


class RunError(AdaptorError):
    """A run ended in a business failure; ``result`` holds the partial output."""

    reason: FailureReason = FailureReason.AGENT_ERROR

    def __init__(
        self,
        message: str,
        *,
        result: Result | None = None,
        details: dict[str, Any] | None = None,
        reason: FailureReason | None = None,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        self.result = result
        self.cause = cause
        """The underlying exception (a process or connection error, the driver's own failure), if there was one."""
        if reason is not None:
            self.reason = reason

    def __str__(self) -> str:
        return f"{self.reason.value}: {self.message}"

    @staticmethod
    def for_reason(
        reason: FailureReason,
        message: str,
        *,
        result: Result | None = None,
        details: dict[str, Any] | None = None,
        cause: BaseException | None = None,
    ) -> RunError:
        """Build the subclass that matches ``reason``."""
        cls = _BY_REASON.get(reason, RunError)
        return cls(message, result=result, details=details, reason=reason, cause=cause)


class ApprovalDenied(RunError):
    """A human (or policy) denied an approval and the policy said abort."""

    reason = FailureReason.APPROVAL_DENIED


class ApprovalTimeout(RunError):
    """Nobody answered an approval in time and the policy said abort."""

    reason = FailureReason.APPROVAL_TIMEOUT


class AgentFailed(RunError):
    """The provider or its CLI failed (API error, crash, protocol error)."""

    reason = FailureReason.AGENT_ERROR


class DeadlineExceeded(RunError):
    """The run used up its ``execution_timeout`` (time spent waiting for a person's answer does not count)."""

    reason = FailureReason.DEADLINE_EXCEEDED


class RunCancelled(RunError):
    """The run was cancelled (by the caller, a timeout or agent shutdown)."""

    reason = FailureReason.CANCELLED


class PolicyViolation(RunError):
    """The output broke a requested contract (for example, a JSON schema)."""

    reason = FailureReason.POLICY_VIOLATION


class LimitExceeded(RunError):
    """Work was stopped by a limit."""

    reason = FailureReason.LIMIT_EXCEEDED


_BY_REASON: dict[FailureReason, type[RunError]] = {
    FailureReason.APPROVAL_DENIED: ApprovalDenied,
    FailureReason.APPROVAL_TIMEOUT: ApprovalTimeout,
    FailureReason.AGENT_ERROR: AgentFailed,
    FailureReason.CANCELLED: RunCancelled,
    FailureReason.POLICY_VIOLATION: PolicyViolation,
    FailureReason.LIMIT_EXCEEDED: LimitExceeded,
    # The machinery failing (a CLI that cannot start or dies, an unreachable endpoint) is still an AgentFailed, one
    # whose ``reason`` says ``infrastructure``.
    FailureReason.INFRASTRUCTURE: AgentFailed,
    FailureReason.DEADLINE_EXCEEDED: DeadlineExceeded,
}

# --- messages ---------------------------------------------------------------------------------------------


class MessageError(AdaptorError):
    """A supplemental message was not admitted; ``text`` is the original text, ``err`` the underlying cause (the
    run's cancellation, ...) or None when the refusal is the whole story (its class says which)."""

    def __init__(
        self,
        message: str,
        *,
        id: str = "",
        text: str = "",
        reason: MessageFailure = MessageFailure.NONE,
        err: BaseException | None = None,
    ):
        super().__init__(message)
        self.id = id
        self.text = text
        self.reason = reason
        self.err = err
        if err is not None:
            self.__cause__ = err


class MessageUnsupportedError(MessageError):
    """Messaging is disabled, or the driver cannot deliver at the requested timing."""


class RunFinishedError(MessageError):
    """The run has already finished; the message was not admitted."""


# --- lifecycle -------------------------------------------------------------------------------------------


class AgentClosedError(AdaptorError):
    """The Agent is closed; it starts no new runs."""


class AgentCloseError(AdaptorError):
    """``Agent.close()`` could not finish every cleanup; ``failures`` names each part. A later close() retries."""

    def __init__(self, message: str, *, failures: list[str]) -> None:
        super().__init__(message)
        self.failures = list(failures)


# --- threads ---------------------------------------------------------------------------------------------


class ThreadError(AdaptorError):
    """A Thread could not be used as asked."""

    def __init__(self, message: str, *, key: str = "", details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.key = key
        self.details: dict[str, Any] = dict(details or {})


class ThreadNotFoundError(ThreadError):
    """resume_only was asked for a thread that does not exist."""


class ThreadBusyError(ThreadError):
    """Another run (or process) owns this thread right now."""


class ThreadIncompatibleError(ThreadError):
    """The saved thread was made with a different driver/config/model/workspace."""


class ThreadLeaseLostError(ThreadError):
    """This process no longer owns the thread's lease."""


class ThreadCheckpointMissingError(ThreadError):
    """The thread has no healthy checkpoint to resume or fork from."""


class ThreadAlreadyExistsError(ThreadError):
    """A fork target key is already taken."""


class ResumeRejectedError(ThreadError):
    """The provider refused to resume the saved session."""


# --- approvals -------------------------------------------------------------------------------------------


class ApprovalError(AdaptorError):
    """An approval response could not be applied."""

    def __init__(self, message: str, *, request_id: str = "") -> None:
        super().__init__(message)
        self.request_id = request_id


class ApprovalResolvedError(ApprovalError):
    """The request was already answered."""


class ApprovalExpiredError(ApprovalResolvedError):
    """The request's deadline passed, or the provider withdrew it."""


class ApprovalKindMismatchError(ApprovalError):
    """approve() on a question, or answer() on a permission request."""


class ApprovalUnavailableError(ApprovalError):
    """The request is not bound to a live run."""


# --- configuration, schema, policy -----------------------------------------------------------------------


class ConfigError(AdaptorError, ValueError):
    """Bad input found before any process started."""

    def __init__(self, message: str, *, option: str = "", details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.option = option
        self.details: dict[str, Any] = dict(details or {})


class InvalidDriverConfigError(ConfigError):
    """A driver's Config is invalid."""


class InvalidOutputSchemaError(ConfigError):
    """The requested output schema cannot be used."""


class StructuredOutputUnsupportedError(ConfigError):
    """The driver offers no way to produce structured output for this request."""


class InvalidPolicyError(ConfigError):
    """A Policy field is malformed."""


class PolicyCapabilityUnsupportedError(ConfigError):
    """A valid policy dimension that this driver cannot enforce."""


class HumanDecisionModeUnsupportedError(ConfigError):
    """An approval mode this driver cannot honour."""


class SkillError(ConfigError):
    """A skill could not be resolved."""


class SkillNotFoundError(SkillError):
    """No skill with that key."""


class SkillKeyConflictError(SkillError):
    """Two skills with the same key were given."""


class SkillMaterializationFailedError(SkillError):
    """A skill source could not be materialized."""


class SkillSourceMissingError(SkillError):
    """A skill has no source."""


class SkillKeyMissingError(SkillError):
    """A skill has no key."""


class InvalidMCPConfigError(ConfigError):
    """An MCP server declaration is malformed."""


class MCPUnsupportedError(ConfigError):
    """The driver cannot attach MCP servers."""


class MCPTransportUnsupportedError(ConfigError):
    """The driver cannot use that MCP transport."""
